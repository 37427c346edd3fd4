/**
 * `npm start`'s prestart: builds dist/ only when it is older than a source,
 * and then fast. The build is current when dist/.build-stamp is newer than
 * every file of src/ and web/, the tsconfigs and package.json. A stale or
 * missing build (a fresh clone) is transpiled file by file with TypeScript's
 * `transpileModule` (no type-check: a few seconds, where `tsc` takes half a
 * minute here), the console's script too, its styles and elkjs copied.
 * `npm run build` and `npm run typecheck` still type-check (CI runs both);
 * `npm run build` also writes the declarations this path leaves out.
 */
const fs = require('node:fs');
const path = require('node:path');

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

/** Transpiles each file of `fromDir` into `toDir` (same relative paths), with source maps when the options ask. */
function transpileTree(ts, options, fromDir, toDir) {
  const compilerOptions = { ...options, declaration: false, declarationMap: false, noEmit: false };
  for (const file of sources(fromDir)) {
    const relative = path.relative(fromDir, file).replace(/\.ts$/, '.js');
    const target = path.join(toDir, relative);
    const output = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
      compilerOptions,
      fileName: path.relative(path.dirname(target), file),
      reportDiagnostics: true,
    });
    const errors = (output.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length) {
      const why = errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ');
      throw new Error(`${path.relative(root, file)}: ${why}`);
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, output.outputText);
    if (output.sourceMapText) fs.writeFileSync(`${target}.map`, output.sourceMapText);
  }
}

const inputs = ['src', 'web', 'tsconfig.json', 'tsconfig.build.json', 'package.json'].map((f) => path.join(root, f));
const built = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : 0;
if (built > Math.max(...inputs.map(newest))) {
  process.stderr.write('lango: build is current (dist/), not recompiling\n');
} else {
  process.stderr.write('lango: transpiling src/ into dist/ (sources changed; npm run build also type-checks)\n');
  const started = Date.now();
  const ts = require('typescript');
  try {
    transpileTree(ts, optionsOf(ts, path.join(root, 'tsconfig.build.json')), path.join(root, 'src'), dist);
    const consoleDir = path.join(root, 'web', 'console');
    const consoleOut = path.join(dist, 'console');
    transpileTree(ts, optionsOf(ts, path.join(consoleDir, 'tsconfig.json')), consoleDir, consoleOut);
    fs.copyFileSync(path.join(consoleDir, 'console.css'), path.join(consoleOut, 'console.css'));
    fs.copyFileSync(require.resolve('elkjs/lib/elk.bundled.js'), path.join(consoleOut, 'elk.js'));
  } catch (error) {
    process.stderr.write(`lango: the build failed: ${error.message}\n`);
    process.exit(1);
  }
  fs.writeFileSync(stamp, `${new Date().toISOString()}\n`);
  process.stderr.write(`lango: built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
