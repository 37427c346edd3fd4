import winston from 'winston';
import type { Logger } from './logger';
import type { SecretRegistry } from './redact';
import { MASKED_WITH } from './redactedLogger';

/** Options for {@link createWinstonLogger}. */
export interface WinstonLoggerOptions {
  level: string;
  /** Human-readable lines when true (a TTY), JSON lines otherwise. */
  pretty: boolean;
  secrets: SecretRegistry;
  /** Where lines go; stderr by default so stdout stays clean for CLI output. */
  stream?: NodeJS.WritableStream;
}

/**
 * The node's production logger: winston, with every line passed through the
 * secret registry before it is formatted.
 */
export function createWinstonLogger(options: WinstonLoggerOptions): Logger {
  const redactFormat = winston.format((info) => {
    const clean = options.secrets.redact({ ...info }) as Record<string, unknown>;
    for (const key of Object.keys(clean)) (info as Record<string, unknown>)[key] = clean[key];
    return info;
  });
  const format = options.pretty
    ? winston.format.combine(
        redactFormat(),
        winston.format.timestamp({ format: 'HH:mm:ss.SSS' }),
        winston.format.colorize(),
        winston.format.printf(({ level, message, timestamp, component, ...rest }) => {
          const meta = Object.keys(rest).length ? ' ' + JSON.stringify(rest) : '';
          return `${timestamp} ${level} ${component ? `[${component}] ` : ''}${message}${meta}`;
        }),
      )
    : winston.format.combine(redactFormat(), winston.format.timestamp(), winston.format.json());
  const root = winston.createLogger({
    level: options.level,
    format,
    transports: [new winston.transports.Stream({ stream: options.stream ?? process.stderr })],
  });
  // Its format masks every line with the registry: `redactedLogger` need not wrap it again.
  return Object.assign(wrap(root), { [MASKED_WITH]: options.secrets });
}

/** The level methods of a {@link Logger}. */
type Level = 'debug' | 'info' | 'warn' | 'error';
type WriteLine = (message: string, meta?: Record<string, unknown>) => void;

/** What a line below the level is written with: nothing. */
const ignoreLine: WriteLine = () => {};

/**
 * A {@link Logger} over a winston logger made on first use. Each request
 * makes a few children (the turn's, the tool's) that usually log nothing at
 * `warn`; winston's `child` allocated one per call (~0.7% of a greeting's
 * CPU). Lines below the level cost nothing and make nothing; a child shares
 * its root's level, so the root answers for it.
 *
 * Callers may take a method off unbound (`(changed ? log.warn : log.debug)(…)`),
 * so each level method is a function bound to its logger; it is made when
 * first asked for (an open stream holds a few children that never write a
 * line, and four closures each were most of their size), and below the level
 * every logger hands out the one {@link ignoreLine}.
 */
class LazyWinstonLogger implements Logger {
  private made: winston.Logger | undefined;
  private bound: Partial<Record<Level, WriteLine>> | undefined;

  /**
   * The root itself (no parent), or a child of `parent` with `bindings`, made when it first writes a line.
   * `levels`: whether the root writes debug and info lines, asked once (the node never changes its level; winston's
   * `isDebugEnabled` walks its transports on every call, a few µs on every greeting).
   */
  constructor(
    private readonly root: winston.Logger,
    private readonly levels: { readonly debug: boolean; readonly info: boolean },
    private readonly parent?: LazyWinstonLogger,
    private readonly bindings?: Record<string, unknown>,
  ) {}

  private get logger(): winston.Logger {
    return (this.made ??= this.parent ? this.parent.logger.child(this.bindings ?? {}) : this.root);
  }

  private writer(level: Level): WriteLine {
    const bound = (this.bound ??= {});
    return (bound[level] ??= (message, meta) => this.logger[level](message, meta));
  }

  get debug(): WriteLine {
    return this.levels.debug ? this.writer('debug') : ignoreLine;
  }

  get info(): WriteLine {
    return this.levels.info ? this.writer('info') : ignoreLine;
  }

  get warn(): WriteLine {
    return this.writer('warn');
  }

  get error(): WriteLine {
    return this.writer('error');
  }

  child(bindings: Record<string, unknown>): Logger {
    return new LazyWinstonLogger(this.root, this.levels, this, bindings);
  }
}

function wrap(root: winston.Logger): Logger {
  return new LazyWinstonLogger(root, { debug: root.isDebugEnabled(), info: root.isInfoEnabled() });
}
