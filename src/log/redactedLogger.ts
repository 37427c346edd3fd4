import type { Logger } from './logger';
import type { SecretRegistry } from './redact';

/** Set on a logger that masks its lines with a registry itself (winston's format does): wrapping it again adds nothing. */
export const MASKED_WITH: unique symbol = Symbol('lango.maskedWith');

/** A logger that may say which registry it masks its lines with. */
type MaybeMasked = Logger & { [MASKED_WITH]?: SecretRegistry };

/**
 * `logger` with every line passed through `secrets` before it is written:
 * known secret values masked in the message, the metadata and the child
 * bindings, and the values of credential-named keys (`token`, `apiKey`,
 * …) masked whatever they are. `createApp` puts every logger it is given
 * behind this (a test's capturing logger as much as the node's), so no line
 * of the node's holds a secret it knows. A logger already masking with the
 * same registry (the node's winston logger) is returned as it is.
 * @example
 * const logger = redactedLogger(createMemoryLogger(), secrets);
 */
export function redactedLogger(logger: Logger, secrets: SecretRegistry): Logger {
  if ((logger as MaybeMasked)[MASKED_WITH] === secrets) return logger;
  const masked = (write: (message: string, meta?: Record<string, unknown>) => void) => {
    return (message: string, meta?: Record<string, unknown>) =>
      write(secrets.redactText(message), meta && (secrets.redact(meta) as Record<string, unknown>));
  };
  return {
    debug: masked((message, meta) => logger.debug(message, meta)),
    info: masked((message, meta) => logger.info(message, meta)),
    warn: masked((message, meta) => logger.warn(message, meta)),
    error: masked((message, meta) => logger.error(message, meta)),
    child: (bindings) => redactedLogger(logger.child(secrets.redact(bindings) as Record<string, unknown>), secrets),
  };
}
