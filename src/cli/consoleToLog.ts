import type { Logger } from '../log/logger';
import { errorMessage } from '../errors';

type ConsoleMethod = 'error' | 'warn' | 'info' | 'log' | 'debug';

/**
 * Sends what libraries print with `console.*` to the node's logger while it
 * serves. The A2A SDK's express handlers `console.error` every refused
 * request with its stack trace (a peer asking for an unknown version, a
 * subscription to an unknown task): in the node's one stream of JSON lines
 * those are unparseable lines a peer could multiply at will. Here each
 * becomes one line with the error's message and A2A reason, no stack.
 * Returns the function that puts the console back.
 * @example
 * const restore = routeConsoleToLogger(logger.child({ component: 'library' }));
 */
export function routeConsoleToLogger(logger: Logger): () => void {
  const levels: Record<ConsoleMethod, 'warn' | 'debug'> = {
    error: 'warn',
    warn: 'warn',
    info: 'debug',
    log: 'debug',
    debug: 'debug',
  };
  const saved = new Map<ConsoleMethod, (...args: unknown[]) => void>();
  for (const method of Object.keys(levels) as ConsoleMethod[]) {
    saved.set(method, console[method]);
    console[method] = (...args: unknown[]) => {
      const [first, ...rest] = args;
      const fields: Record<string, unknown> = {};
      const errors = args.filter((arg): arg is Error => arg instanceof Error);
      if (errors.length > 0) {
        fields.error = errors.map(errorMessage).join('; ');
        const reason = (errors[0] as Error & { reason?: unknown }).reason;
        if (typeof reason === 'string') fields.reason = reason;
      }
      const text = rest.filter((arg) => !(arg instanceof Error) && typeof arg !== 'object').map(String);
      const message = typeof first === 'string' ? [first, ...text].join(' ').replace(/:\s*$/, '') : 'library message';
      logger[levels[method]](message, fields);
    };
  }
  return () => {
    for (const [method, original] of saved) console[method] = original;
  };
}
