/**
 * `npm start`'s prestart: builds dist/ only when it is older than a source,
 * and then fast. The build is current when dist/.build-stamp is newer than
 * every file of src/ and web/, the tsconfigs and package.json. A stale or
 * missing build (a fresh clone) is transpiled file by file with TypeScript's
 * `transpileModule` on a worker thread per core (no type-check: 5–6 s
 * of CPU per core on this machine, where `tsc` takes half a minute and
 * `tsc --noCheck` 20 s), the console's script too, its styles and elkjs
 * copied.
 * `npm run build` and `npm run typecheck` still type-check (CI runs both);
 * `npm run build` also writes the declarations this path leaves out, and
 * marks its build current (`--mark-current`).
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');
const stamp = path.join(dist, '.build-stamp');

/** The newest modification time under `file` (a file or a folder), in ms. */
function newest(file) {
  const stat = fs.statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return fs.readdirSync(file).reduce((max, name) => Math.max(max, newest(path.join(file, name))), stat.mtimeMs);
}

/** Every `.ts` file under `dir` (declarations excluded). */
function sources(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** The compiler options of `tsconfig` (its `extends` followed), as TypeScript reads them. */
function optionsOf(ts, tsconfig) {
  const read = ts.readConfigFile(tsconfig, ts.sys.readFile);
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  return ts.parseJsonConfigFileContent(read.config, ts.sys, path.dirname(tsconfig)).options;
}

/**
 * Writes `file` aside, then renames it into place: a node started from dist/
 * while a build runs (a test's, another `npm start`) reads each file whole,
 * the old one or the new, never half of one.
 */
function writeWhole(file, content) {
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  fs.writeFileSync(temp, content);
  fs.renameSync(temp, file);
}

/** Transpiles `files` (pairs of a source and its target) with `options`; a map's `sources` point at the source. */
function transpileFiles(ts, options, files) {
  // One file at a time: the program-wide options (rootDir, outDir) do not apply; the target path is chosen here.
  const compilerOptions = { ...options, declaration: false, declarationMap: false, noEmit: false };
  delete compilerOptions.rootDir;
  delete compilerOptions.outDir;
  for (const [file, target] of files) {
    const output = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
      compilerOptions,
      fileName: file,
      reportDiagnostics: true,
    });
    const errors = (output.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length) {
      const why = errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ');
      throw new Error(`${path.relative(root, file)}: ${why}`);
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    writeWhole(target, output.outputText);
    if (output.sourceMapText) {
      const map = JSON.parse(output.sourceMapText);
      map.sources = [path.relative(path.dirname(target), file).split(path.sep).join('/')];
      writeWhole(`${target}.map`, JSON.stringify(map));
    }
  }
}

/** Each `.ts` file of `fromDir` paired with its `.js` in `toDir` (same relative path). */
function pairs(fromDir, toDir) {
  return sources(fromDir).map((file) => [file, path.join(toDir, path.relative(fromDir, file).replace(/\.ts$/, '.js'))]);
}

/**
 * Transpiles the node's sources and the console's script on the machine's
 * cores: a worker thread per core, each loading TypeScript once and taking
 * every n-th file (this thread loads none), then copies the console's styles
 * and elkjs.
 */
async function transpileAll() {
  const consoleDir = path.join(root, 'web', 'console');
  const consoleOut = path.join(dist, 'console');
  const jobs = [
    ...pairs(path.join(root, 'src'), dist).map((pair) => ({ tsconfig: path.join(root, 'tsconfig.build.json'), pair })),
    ...pairs(consoleDir, consoleOut).map((pair) => ({ tsconfig: path.join(consoleDir, 'tsconfig.json'), pair })),
  ];
  const workers = Math.max(1, Math.min(4, os.availableParallelism?.() ?? os.cpus().length));
  await Promise.all(
    Array.from({ length: workers }, (_, i) => {
      const share = jobs.filter((_job, index) => index % workers === i);
      return new Promise((resolve, reject) => {
        const worker = new Worker(module.filename, { workerData: share });
        worker.once('message', (message) => (message.error ? reject(new Error(message.error)) : resolve()));
        worker.once('error', reject);
      });
    }),
  );
  writeWhole(path.join(consoleOut, 'console.css'), fs.readFileSync(path.join(consoleDir, 'console.css')));
  writeWhole(path.join(consoleOut, 'elk.js'), fs.readFileSync(require.resolve('elkjs/lib/elk.bundled.js')));
}

/** A worker's share: its files, grouped by the tsconfig whose options they are transpiled with. */
function transpileShare(share) {
  const ts = require('typescript');
  const byConfig = new Map();
  for (const { tsconfig, pair } of share) byConfig.set(tsconfig, [...(byConfig.get(tsconfig) ?? []), pair]);
  for (const [tsconfig, files] of byConfig) transpileFiles(ts, optionsOf(ts, tsconfig), files);
}

async function main() {
  // `npm run build` ends here: its tsc output is current, and a later `npm start` or test need not transpile again.
  if (process.argv.includes('--mark-current')) return fs.writeFileSync(stamp, `${new Date().toISOString()}\n`);
  const inputs = ['src', 'web', 'tsconfig.json', 'tsconfig.build.json', 'package.json'].map((f) => path.join(root, f));
  const built = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : 0;
  if (built > Math.max(...inputs.map(newest))) {
    process.stderr.write('lango: build is current (dist/), not recompiling\n');
    return;
  }
  process.stderr.write('lango: transpiling src/ into dist/ (sources changed; npm run build also type-checks)\n');
  const started = Date.now();
  try {
    await transpileAll();
  } catch (error) {
    process.stderr.write(`lango: the build failed: ${error.message}\n`);
    process.exit(1);
  }
  fs.writeFileSync(stamp, `${new Date().toISOString()}\n`);
  process.stderr.write(`lango: built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

if (isMainThread) {
  void main();
} else {
  try {
    transpileShare(workerData);
    parentPort.postMessage({});
  } catch (error) {
    parentPort.postMessage({ error: error.message });
  }
}
