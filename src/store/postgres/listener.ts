import { Client } from 'pg';
import { errorMessage } from '../../errors';
import type { Logger } from '../../log/logger';
import { NOOP_OBSERVER, type Observer } from '../../observation/observer';

/**
 * This replica's one `LISTEN` connection. A pooled client cannot listen (it
 * goes back to the pool), so the listener holds a client of its own; when
 * that connection drops it reconnects with a growing pause, logging the
 * error: nothing a database outage does ends the process.
 */
export interface PgListener {
  /** Calls `handler` with the payload of every notification on `channel`; returns the function that removes it. */
  on(channel: string, handler: (payload: string) => void): () => void;
  /**
   * Listens on `channel` (one not listened on always) while at least one
   * hold is kept: the first hold sends `LISTEN`, the last release
   * `UNLISTEN`, so a replica is woken by the channel only while something
   * here waits on it. `listening` resolves once the channel is listened on
   * (or the connection is down: it listens again on reconnect, and the
   * {@link onReconnect} handlers re-read); `release` once it is not (or
   * another hold keeps it).
   */
  hold(channel: string): { listening: Promise<void>; release(): Promise<void> };
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
  /** Channel names (plain identifiers): listened on at every (re)connect. Others are listened on while held. */
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
 * const listener = createPgListener({ url, channels: ['lango_task_cancels'], logger });
 * listener.on('lango_task_events', (payload) => wake(payload));
 * const held = listener.hold('lango_task_events');
 * await held.listening; // read the rows, then wait for a wake-up
 * held.release();
 */
export function createPgListener(options: PgListenerOptions): PgListener {
  const { url, channels } = options;
  const requireChannelName = (channel: string) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  };
  channels.forEach(requireChannelName);
  /** The held channels: how many holds each has, and when its LISTEN on the current connection is done. */
  const holds = new Map<string, { count: number; listening: Promise<void> }>();
  const log = options.logger.child({ component: 'pg-listener' });
  const retryMs = options.retryMs ?? 100;
  const maxRetryMs = options.maxRetryMs ?? 2_000;
  const handlers = new Map<string, Set<(payload: string) => void>>();
  const reconnectHandlers = new Set<(downSince: Date) => void>();
  let closed = false;
  let current: Client | undefined;
  let wakeRetry: (() => void) | undefined;
  let resolveReady!: () => void;
  /** Resolves once the connection listens the first time: a hold taken before waits for it. */
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
        // Current before listening: a hold taken meanwhile sends its own LISTEN (a second one is harmless).
        current = client;
        for (const channel of channels) await client.query(`LISTEN ${channel}`);
        // Checked one by one: a hold released meanwhile has sent its UNLISTEN, which this must not follow.
        for (const channel of [...holds.keys()]) if (holds.has(channel)) await client.query(`LISTEN ${channel}`);
        if (!closed) {
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
      current = undefined;
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
    on(channel, handler) {
      let set = handlers.get(channel);
      if (!set) handlers.set(channel, (set = new Set()));
      set.add(handler);
      return () => set.delete(handler);
    },
    hold(channel) {
      requireChannelName(channel);
      const send = (command: 'LISTEN' | 'UNLISTEN') =>
        current
          ?.query(`${command} ${channel}`)
          .then(() => undefined)
          .catch((err: unknown) => log.warn(`${command} failed`, { channel, error: errorMessage(err) }));
      let held = holds.get(channel);
      // Not connected: the connection listens on every held channel when it (re)connects.
      if (held) held.count += 1;
      else holds.set(channel, (held = { count: 1, listening: send('LISTEN') ?? ready }));
      let released = false;
      return {
        listening: held.listening,
        async release() {
          const now = holds.get(channel);
          if (released || !now) return;
          released = true;
          now.count -= 1;
          if (now.count > 0) return;
          holds.delete(channel);
          await send('UNLISTEN');
        },
      };
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
