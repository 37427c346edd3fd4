/**
 * `npm start`'s prestart: compiles only when the build is older than a source.
 * The build is current when dist/.build-stamp (written after a successful
 * `tsc -p tsconfig.build.json` and console build) is newer than every file of
 * src/ and web/, the tsconfigs and package.json; then starting takes about a second instead of a
 * full compile.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const stamp = path.join(root, 'dist', '.build-stamp');

/** The newest modification time under `file` (a file or a folder), in ms. */
function newest(file) {
  const stat = fs.statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return fs.readdirSync(file).reduce((max, name) => Math.max(max, newest(path.join(file, name))), stat.mtimeMs);
}

const inputs = ['src', 'web', 'tsconfig.json', 'tsconfig.build.json', 'package.json'].map((f) => path.join(root, f));
const built = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : 0;
if (built > Math.max(...inputs.map(newest))) {
  process.stderr.write('lango: build is current (dist/), not recompiling\n');
} else {
  process.stderr.write('lango: compiling (sources changed since the last build)\n');
  const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  const web = spawnSync(process.execPath, [path.join(__dirname, 'build-console.js')], { cwd: root, stdio: 'inherit' });
  if (web.status !== 0) process.exit(web.status ?? 1);
  fs.writeFileSync(stamp, `${new Date().toISOString()}\n`);
}
