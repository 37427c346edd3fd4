import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The layers of ARCHITECTURE.md, bottom first. A module may import its own
 * layer or one below, never one above; the longest matching prefix names a
 * module's layer. Keep this list and ARCHITECTURE.md in step.
 */
const LAYERS: readonly (readonly string[])[] = [
  [
    'errors.ts',
    'principal.ts',
    'duration.ts',
    'stopwords.ts',
    'packages.ts',
    'privateFiles.ts',
    'log/',
    'protocol/',
    'net/',
    'observation/',
  ],
  ['config/'],
  ['llm/'],
  ['store/'],
  ['vault/'],
  ['agent/'],
  ['orchestration/', 'toolset/'],
  ['tools/'],
  ['tools/families.ts', 'prompt/'],
  ['federation/'],
  ['identity/'],
  ['a2a/card/'],
  ['a2a/tasks/'],
  ['a2a/bindings/'],
  ['a2a/'],
  ['observe/'],
  ['app.ts'],
  ['serve/'],
  ['index.ts'],
  ['cli/'],
];

const SRC = path.resolve(__dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** `src/`-relative paths of the modules `file` imports (type-only and re-exports included). */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.flatMap(({ fileName }) => {
    if (!fileName.startsWith('.')) return [];
    const base = path.resolve(path.dirname(file), fileName);
    const target = [`${base}.ts`, path.join(base, 'index.ts')].find((candidate) => fs.existsSync(candidate));
    if (!target) throw new Error(`${path.relative(SRC, file)} imports ${fileName}, which does not exist`);
    return [path.relative(SRC, target).split(path.sep).join('/')];
  });
}

/** The layer of a `src/`-relative module path, by the longest matching prefix. */
function layerOf(module: string): number {
  let best = { layer: -1, length: -1 };
  LAYERS.forEach((prefixes, layer) => {
    for (const prefix of prefixes) {
      if (module.startsWith(prefix) && prefix.length > best.length) best = { layer, length: prefix.length };
    }
  });
  if (best.layer < 0) throw new Error(`src/${module} is in no layer: add its folder to LAYERS and ARCHITECTURE.md`);
  return best.layer;
}

/** Every import cycle among `graph`'s modules, each as the path that closes it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const trail: string[] = [];
  const visit = (module: string) => {
    if (state.get(module) === 'done') return;
    if (state.get(module) === 'visiting') {
      found.push([...trail.slice(trail.indexOf(module)), module]);
      return;
    }
    state.set(module, 'visiting');
    trail.push(module);
    for (const next of graph.get(module) ?? []) visit(next);
    trail.pop();
    state.set(module, 'done');
  };
  for (const module of graph.keys()) visit(module);
  return found;
}

describe('layers (ARCHITECTURE.md)', () => {
  const graph = new Map(
    sourceFiles(SRC).map((file) => [path.relative(SRC, file).split(path.sep).join('/'), importsOf(file)]),
  );

  it('puts every module of src/ in a layer', () => {
    const unplaced = [...graph.keys()].filter((module) => !LAYERS.flat().some((prefix) => module.startsWith(prefix)));
    expect(unplaced).toEqual([]);
  });

  it('has no import running up a layer', () => {
    const upward = [...graph].flatMap(([module, imports]) =>
      imports
        .filter((target) => layerOf(target) > layerOf(module))
        .map((target) => `${module} (layer ${layerOf(module)}) imports ${target} (layer ${layerOf(target)})`),
    );
    expect(upward).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(cycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('keeps the database choice in store/: nothing from the vault up to app.ts names store/sqlite or store/postgres', () => {
    // The public surface (index.ts) and the command line (`lango migrate`) may; a2a/ above all may not:
    // it asks the store in use for its health and takes no database handle.
    const implementation = /^store\/(sqlite|postgres)\//;
    const above = (module: string) =>
      layerOf(module) > layerOf('store/index.ts') && layerOf(module) <= layerOf('app.ts');
    const leaks = [...graph].flatMap(([module, imports]) =>
      above(module) ? imports.filter((target) => implementation.test(target)).map((t) => `${module} imports ${t}`) : [],
    );
    expect(leaks).toEqual([]);
    expect(above('a2a/server.ts') && above('app.ts') && !above('store/open.ts') && !above('index.ts')).toBe(true);
  });

  it('catches an import up a layer and a cycle (the checks can fail)', () => {
    expect(layerOf('store/sessions.ts')).toBeLessThan(layerOf('agent/runner.ts'));
    expect(layerOf('toolset/family.ts')).toBeLessThan(layerOf('tools/vault/family.ts'));
    const looped = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
    ]);
    expect(cycles(looped)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });
});
