import { combineObservers, NOOP_OBSERVER, type Observer } from './observer';

/**
 * The node's one observer, built before anything reports to it (the stores
 * report their writes from the moment they open) and joined by its sinks
 * once they exist: metrics, spans and timelines read the node's callers,
 * task rows and tree, which are built after the stores. Until then, and
 * when no sink listens, it is a no-op (`active` false).
 */
export interface ObservationHub extends Observer {
  /**
   * Connects the sinks (`createObservability`), once: every later report
   * reaches them; `close` (their exporters' flush) runs when the hub closes.
   */
  attach(sinks: readonly Observer[], close?: () => Promise<void>): void;
  /**
   * Closes the sinks. The hub is built first and so closed last: whatever
   * reports while the rest of the node shuts down still reaches them.
   */
  close(): Promise<void>;
}

/**
 * Builds the hub: the first thing `createApp` builds.
 * @example
 * const observation = createObservationHub();
 * const storage = await openNodeStorage({ ..., observer: observation });
 * observation.attach([observability.observer], () => observability.close());
 */
export function createObservationHub(): ObservationHub {
  let sink: Observer = NOOP_OBSERVER;
  let attached = false;
  let closeSinks: (() => Promise<void>) | undefined;
  return {
    get active() {
      return sink.active;
    },
    turn: (start) => sink.turn(start),
    storeWrite: (ms, statements) => sink.storeWrite(ms, statements),
    storeNotification: (channel) => sink.storeNotification(channel),
    attach(sinks, close) {
      if (attached) throw new Error('the observation hub has its sinks already');
      attached = true;
      sink = combineObservers(sinks);
      closeSinks = close;
    },
    async close() {
      sink = NOOP_OBSERVER;
      await closeSinks?.();
    },
  };
}
