import winston from 'winston';
import type { Logger } from './logger';
import type { SecretRegistry } from './redact';

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
  return wrap(root);
}

/**
 * A {@link Logger} over a winston logger made on first use. Each request
 * makes a few children (the turn's, the tool's) that usually log nothing at
 * `warn`; winston's `child` allocated one per call (~0.7% of a greeting's
 * CPU). Lines below the level cost nothing and make nothing; a child shares
 * its root's level, so the root answers for it.
 */
class LazyWinstonLogger implements Logger {
  private made: winston.Logger | undefined;

  constructor(
    private readonly make: () => winston.Logger,
    private readonly root: winston.Logger,
  ) {}

  private get logger(): winston.Logger {
    return (this.made ??= this.make());
  }

  // Arrow fields, not methods: callers may pass a method on unbound (`(changed ? log.warn : log.debug)(…)`).
  debug = (message: string, meta?: Record<string, unknown>): void => {
    if (this.root.isDebugEnabled()) this.logger.debug(message, meta);
  };

  info = (message: string, meta?: Record<string, unknown>): void => {
    if (this.root.isInfoEnabled()) this.logger.info(message, meta);
  };

  warn = (message: string, meta?: Record<string, unknown>): void => {
    this.logger.warn(message, meta);
  };

  error = (message: string, meta?: Record<string, unknown>): void => {
    this.logger.error(message, meta);
  };

  child = (bindings: Record<string, unknown>): Logger =>
    new LazyWinstonLogger(() => this.logger.child(bindings), this.root);
}

function wrap(root: winston.Logger): Logger {
  return new LazyWinstonLogger(() => root, root);
}
