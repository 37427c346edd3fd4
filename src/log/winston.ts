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

function wrap(w: winston.Logger): Logger {
  return {
    // Debug lines sit on hot paths; below the level they must cost nothing.
    debug: (m, meta) => {
      if (w.isDebugEnabled()) w.debug(m, meta);
    },
    info: (m, meta) => w.info(m, meta),
    warn: (m, meta) => w.warn(m, meta),
    error: (m, meta) => w.error(m, meta),
    child: (bindings) => wrap(w.child(bindings)),
  };
}
