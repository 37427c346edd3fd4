/**
 * Installs the test extras (test/extras/package.json: ganache and solc for
 * the payment tests' local chain, other A2A stacks for the interop tests and
 * the bench's ADK side) into test/extras/node_modules from their own
 * lockfile, when they are missing or older than it. They stay out of the
 * node's own install, so a fresh clone's `npm install` and a production
 * install never fetch them, and out of the path the other tests resolve
 * packages on: only the files in test/extras/ (and the bench's ADK side)
 * see them. `npm test` (its pretest) and .ci/run call this first; `--check`
 * only says whether they are current (exit 1 when not).
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const extrasDir = path.resolve(__dirname, '..', 'test', 'extras');
/** Written after each successful install: the extras are current while it is newer than their manifest and lockfile. */
const stamp = path.join(extrasDir, 'node_modules', '.lango-extras-stamp');
const inputs = ['package.json', 'package-lock.json'].map((file) => path.join(extrasDir, file));

const mtime = (file) => (fs.existsSync(file) ? fs.statSync(file).mtimeMs : 0);
const current = mtime(stamp) > Math.max(...inputs.map(mtime));

if (process.argv.includes('--check')) {
  process.stderr.write(`test extras: ${current ? 'installed' : 'missing or stale (npm run test:extras)'}\n`);
  process.exit(current ? 0 : 1);
}
if (!current) {
  process.stderr.write('lango: installing the test extras into test/extras/node_modules (test/extras/package.json)\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const run = spawnSync(npm, ['install', '--prefix', extrasDir, '--no-audit', '--no-fund'], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
  fs.writeFileSync(stamp, `${new Date().toISOString()}\n`);
}
