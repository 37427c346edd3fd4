import type { Stores } from '../../../src/store';

/** An open set of stores on a fresh, empty database. */
export interface OpenedStores {
  stores: Stores;
  /** Closes and opens the same database again (what survives a restart); resolves with the new stores. */
  reopen(): Promise<Stores>;
  /** Closes the database and removes what the test created. */
  close(): Promise<void>;
}

/** How a suite opens its stores: `clock` stamps rows, `timelinesKept` bounds the turn timelines kept. */
export interface StoresOptions {
  clock?: () => Date;
  timelinesKept?: number;
}

/**
 * How the contract suites get a database: SQLite now, PostgreSQL later
 * (issue 16), each run through the same suites. `clock` is the time every
 * store stamps rows with.
 */
export interface StoresFactory {
  name: string;
  open(options?: StoresOptions): Promise<OpenedStores>;
}

/**
 * Opens the factory's stores for each test of the calling `describe`, closed
 * after it; the returned getter reads the current ones.
 */
export function useStores(factory: StoresFactory, options: StoresOptions = {}): () => OpenedStores {
  let opened: OpenedStores | undefined;
  beforeEach(async () => {
    opened = await factory.open(options);
  });
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });
  return () => {
    if (!opened) throw new Error('the stores are opened per test');
    return opened;
  };
}
