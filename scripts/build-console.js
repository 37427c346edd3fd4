/**
 * Builds the web console into dist/console: compiles its script (a DOM
 * tsconfig of its own, so the node's code never sees browser types), copies
 * its styles and the elkjs browser bundle (the graph's layout library) as
 * `elk.js`. Run by `npm run build` (`npm start`'s prestart transpiles the
 * console with the rest, scripts/build-if-stale.js).
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const out = path.join(root, 'dist/console');
const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'web/console/tsconfig.json'], {
  cwd: root,
  stdio: 'inherit',
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
fs.copyFileSync(path.join(root, 'web/console/console.css'), path.join(out, 'console.css'));
fs.copyFileSync(require.resolve('elkjs/lib/elk.bundled.js'), path.join(out, 'elk.js'));
