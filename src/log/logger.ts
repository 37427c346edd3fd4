/**
 * The logger every module receives as a dependency. Library code never calls
 * `console.*`; the composition root decides where lines go (winston in the
 * node, a capturing logger in tests).
 */
export interface Logger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
  /** A logger whose lines carry `bindings` (e.g. `{ component: 'a2a' }`). */
  child(bindings: Record<string, unknown>): Logger;
}

/** One line captured by {@link createMemoryLogger}. */
export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  meta: Record<string, unknown>;
}

/** A logger that keeps its lines in memory: for tests and for `lango chat`'s quiet mode. */
export interface MemoryLogger extends Logger {
  readonly records: LogRecord[];
}

/**
 * Creates a {@link MemoryLogger}; children share the parent's record list.
 * @example
 * const log = createMemoryLogger();
 * log.child({ component: 'federation' }).warn('peer skipped', { name: 'x' });
 * log.records[0].meta.component; // 'federation'
 */
export function createMemoryLogger(bindings: Record<string, unknown> = {}, records: LogRecord[] = []): MemoryLogger {
  const write =
    (level: LogRecord['level']) =>
    (message: string, meta: Record<string, unknown> = {}) => {
      records.push({ level, message, meta: { ...bindings, ...meta } });
    };
  return {
    records,
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    child: (more) => createMemoryLogger({ ...bindings, ...more }, records),
  };
}

/** A logger that drops everything. */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentLogger,
};
