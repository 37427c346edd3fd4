import fs from 'node:fs';
import path from 'node:path';

/** Content types of the files the console build writes; nothing else in the folder is served. */
const TYPES: ReadonlyMap<string, string> = new Map([
  ['.js', 'text/javascript'],
  ['.css', 'text/css'],
]);

/** A console asset: where it is and how it is served. */
export interface ConsoleAsset {
  file: string;
  type: string;
}

/**
 * The console's built assets (`dist/console`: its scripts, styles and the
 * elkjs layout bundle), looked up in a `Map` of what the build wrote: a name
 * not built (`constructor`, `__proto__`, `../x`) is simply absent. The folder
 * is read again when a lookup misses and the console was not built when it
 * was last read (a `npm run build` after the node started).
 * @example
 * const assets = consoleAssets(path.resolve('dist/console'));
 * assets.get('console.js'); // { file: '/…/dist/console/console.js', type: 'text/javascript' }
 */
export function consoleAssets(dir: string): { get(name: string): ConsoleAsset | undefined } {
  let built = new Map<string, ConsoleAsset>();
  const read = () => {
    const found = new Map<string, ConsoleAsset>();
    let names: string[] = [];
    try {
      names = fs.readdirSync(dir);
    } catch {
      // Not built yet: nothing is served.
    }
    for (const name of names) {
      const type = TYPES.get(path.extname(name));
      if (type && /^[\w.-]+$/.test(name)) found.set(name, { file: path.join(dir, name), type });
    }
    built = found;
  };
  read();
  return {
    get(name) {
      const asset = built.get(name);
      if (asset || built.has('console.js')) return asset;
      read();
      return built.get(name);
    },
  };
}
