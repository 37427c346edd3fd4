import { Worker } from 'node:worker_threads';
import type { Logger } from '../../log/logger';
import type { SqliteDatabase } from './database';

/** SQLite's own default: checkpoint once the WAL holds this many pages. */
const AUTO_CHECKPOINT_PAGES = 1000;
/**
 * With the worker running, the connection still checkpoints past this many
 * pages: by then the worker has copied nearly every frame, so that pass is
 * short, and only a checkpoint by the writer itself lets the WAL start over
 * from its beginning (under steady writes the worker's never catches up fully).
 */
const BACKSTOP_CHECKPOINT_PAGES = 4000;

// The worker is plain CommonJS run from a string, so it works the same from `src/` (tests) and `dist/`.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message || err) });
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Moves WAL checkpoints off the event loop. SQLite copies the WAL back into
 * the database file (and syncs it) inside whichever commit crosses the
 * threshold, so one request in a thousand pages paid for everyone's writes
 * and every request queued behind it waited. A worker thread with its own
 * connection checkpoints every `intervalMs` instead (PASSIVE: it never
 * blocks the writer), and the node's connection checkpoints only rarely
 * (see BACKSTOP_CHECKPOINT_PAGES). If the worker fails, the connection
 * checkpoints as often as SQLite's default again.
 * Returns a stop function to call before the database closes.
 * @example
 * const stop = startBackgroundCheckpoints({ db, file, logger });
 * await stop();
 * db.close();
 */
export function startBackgroundCheckpoints(options: {
  db: SqliteDatabase;
  file: string;
  logger: Logger;
  intervalMs?: number;
}): () => Promise<void> {
  const { db, file, logger } = options;
  const log = logger.child({ component: 'checkpointer' });
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { file, driver: require.resolve('better-sqlite3'), intervalMs: options.intervalMs ?? 500 },
  });
  worker.unref();
  let stopping = false;
  let fellBack = false;
  const fallBack = (reason: string) => {
    // A failing worker reports `error` and then `exit`: one warning.
    if (stopping || fellBack || !db.open) return;
    fellBack = true;
    log.warn('background checkpoints stopped; the database checkpoints on commit again', { reason });
    db.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
  };
  worker.on('message', (message: { error?: string }) => {
    if (message.error) log.warn('background checkpoint failed', { error: message.error });
  });
  let exited = false;
  worker.on('error', (err) => fallBack(err.message));
  worker.on('exit', () => {
    exited = true;
    fallBack('the checkpoint worker exited');
  });
  db.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
  return async () => {
    if (stopping) return;
    stopping = true;
    if (!exited) {
      const exit = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage('stop');
      // A worker stuck in a checkpoint must not hold up shutdown.
      const timeout = setTimeout(() => void worker.terminate(), 2_000);
      await exit;
      clearTimeout(timeout);
    }
    if (db.open) db.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
  };
}
