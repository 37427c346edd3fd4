import { Client } from 'pg';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { NOOP_OBSERVER, type Observer } from '../../observe/observer';

/**
 * This replica's one `LISTEN` connection. A pooled client cannot listen (it
 * goes back to the pool), so the listener holds a client of its own; when
 * that connection drops it reconnects with a growing pause, logging the
 * error: nothing a database outage does ends the process.
 */
export interface PgListener {
  /** Resolves once the channels are listened on (the first time); a follower reads its rows after this. */
  ready(): Promise<void>;
  /** Calls `handler` with the payload of every notification on `channel`; returns the function that removes it. */
  on(channel: string, handler: (payload: string) => void): () => void;
  /**
   * Calls `handler` each time the connection is back after a loss, once
   * listening again: notifications sent meanwhile were lost, so readers re-read
   * their tables. Returns the function that removes it.
   */
  onReconnect(handler: (downSince: Date) => void): () => void;
  /** Ends the connection and stops reconnecting. */
  close(): Promise<void>;
}

/** Options of {@link createPgListener}. */
export interface PgListenerOptions {
  url: string;
  /** Channel names (plain identifiers): listened on at every (re)connect. */
  channels: readonly string[];
  logger: Logger;
  /** Told of each notification received (the metrics count wake-ups per replica). */
  observer?: Observer;
  /** The first pause before reconnecting, doubled each failure up to `maxRetryMs` (defaults 100 ms, 2 s). */
  retryMs?: number;
  maxRetryMs?: number;
}

/**
 * Connects the listening client and keeps it connected.
 * @example
 * const listener = createPgListener({ url, channels: ['lango_task_events'], logger });
 * listener.on('lango_task_events', (payload) => wake(payload));
 * await listener.ready();
 */
export function createPgListener(options: PgListenerOptions): PgListener {
  const { url, channels } = options;
  for (const channel of channels) {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  }
  const log = options.logger.child({ component: 'pg-listener' });
  const retryMs = options.retryMs ?? 100;
  const maxRetryMs = options.maxRetryMs ?? 2_000;
  const handlers = new Map<string, Set<(payload: string) => void>>();
  const reconnectHandlers = new Set<(downSince: Date) => void>();
  let closed = false;
  let current: Client | undefined;
  let wakeRetry: (() => void) | undefined;
  let resolveReady!: () => void;
  const ready = new Promise<void>((resolve) => (resolveReady = resolve));

  const observer = options.observer ?? NOOP_OBSERVER;
  const dispatch = (channel: string, payload: string) => {
    observer.storeNotification(channel);
    for (const handler of handlers.get(channel) ?? []) {
      try {
        handler(payload);
      } catch (err) {
        log.warn('notification handler failed', { channel, error: errorMessage(err) });
      }
    }
  };

  const run = async () => {
    let pause = retryMs;
    /** When the last listening connection was lost: set until listening again. */
    let downSince: Date | undefined;
    while (!closed) {
      const client = new Client({ connectionString: url });
      const ended = new Promise<void>((resolve) => {
        client.on('error', (err) => {
          log.warn('listen connection failed', { error: errorMessage(err) });
          resolve();
        });
        client.on('end', () => resolve());
      });
      client.on('notification', (message) => dispatch(message.channel, message.payload ?? ''));
      try {
        await client.connect();
        for (const channel of channels) await client.query(`LISTEN ${channel}`);
        if (!closed) {
          current = client;
          pause = retryMs;
          resolveReady();
          if (downSince) {
            log.info('listen connection back');
            for (const handler of reconnectHandlers) {
              try {
                handler(downSince);
              } catch (err) {
                log.warn('reconnect handler failed', { error: errorMessage(err) });
              }
            }
            downSince = undefined;
          }
          await ended;
          current = undefined;
          downSince = new Date();
        }
      } catch (err) {
        log.warn('listen connection failed', { error: errorMessage(err) });
      }
      await client.end().catch(() => {});
      if (closed) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause);
        timer.unref();
        wakeRetry = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeRetry = undefined;
      pause = Math.min(pause * 2, maxRetryMs);
    }
  };
  const running = run();

  return {
    ready: () => ready,
    on(channel, handler) {
      let set = handlers.get(channel);
      if (!set) handlers.set(channel, (set = new Set()));
      set.add(handler);
      return () => set.delete(handler);
    },
    onReconnect(handler) {
      reconnectHandlers.add(handler);
      return () => reconnectHandlers.delete(handler);
    },
    async close() {
      closed = true;
      wakeRetry?.();
      await current?.end().catch(() => {});
      await running;
    },
  };
}
