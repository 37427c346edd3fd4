/**
 * Preloaded into a child process (`node --import <this file> …`) by tests
 * that must know how it ended: writes `drained` to the file named by
 * `LANGO_TEST_DRAIN_FILE` when Node's event loop emptied by itself
 * (`beforeExit`, which `process.exit()` skips). A process that ends this way
 * left nothing holding it: no socket, timer, worker or child.
 */
import fs from 'node:fs';

const file = process.env.LANGO_TEST_DRAIN_FILE;
if (file) process.once('beforeExit', () => fs.writeFileSync(file, 'drained\n'));
