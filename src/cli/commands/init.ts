import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../../errors';
import { ExitCode } from '../io';
import type { CommandRun } from '../commandRun';
import { projectFiles, type ProjectTemplateOptions } from '../init/template';

/** lango's own folder (beside `src/` and `dist/` alike) and its manifest. */
function langoPackage(): { root: string; manifest: Record<string, Record<string, string> | undefined> } {
  const root = path.resolve(__dirname, '..', '..', '..');
  return { root, manifest: JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) };
}

/** The versions the project pins: those lango itself is built and tested with. */
function versions(manifest: ReturnType<typeof langoPackage>['manifest']): ProjectTemplateOptions['versions'] {
  const all = { ...manifest.devDependencies, ...manifest.dependencies };
  const pick = (name: string, fallback: string) => all[name] ?? fallback;
  return {
    zod: pick('zod', '^4.0.0'),
    typescript: pick('typescript', '^5.0.0'),
    jest: pick('jest', '^30.0.0'),
    'ts-jest': pick('ts-jest', '^29.0.0'),
    '@types/jest': pick('@types/jest', '^30.0.0'),
    '@types/node': pick('@types/node', '^20.0.0'),
  };
}

/**
 * `lango init [DIR]`: a project embedding a node with a custom tool
 * (`defineTool`) and its jest test, ready for `npm install`, `npm test` and
 * `npm start`. Writes nothing when one of its files exists already (exit 2
 * naming them), and never through a symbolic link or outside DIR (issue
 * 37, 7): DIR and every folder it writes in must be real folders, and each
 * file is created new (a link at its name, even a dangling one, counts as
 * taken).
 */
export async function init({ ctx, args }: CommandRun): Promise<number> {
  const dir = args[0] as string;
  const folder = path.resolve(ctx.cwd, dir);
  const { root, manifest } = langoPackage();
  const files = projectFiles({ name: projectName(folder), langoRoot: root, versions: versions(manifest) });
  const links = linksOnTheWay(folder, Object.keys(files));
  if (links.length)
    throw new InputError(
      `${links.join(', ')} ${links.length === 1 ? 'is a symbolic link' : 'are symbolic links'}; ` +
        'lango init writes only inside the folder it is given: choose a folder without links (lango init DIR)',
    );
  const taken = Object.keys(files).filter((file) => fs.lstatSync(path.join(folder, file), { throwIfNoEntry: false }));
  if (taken.length)
    throw new InputError(`${folder} already has ${taken.join(', ')}; choose an empty folder (lango init DIR)`);
  for (const [file, content] of Object.entries(files)) writeInside(folder, file, content);
  const relative = path.relative(ctx.cwd, folder);
  const cd = relative.startsWith('..') ? folder : relative;
  ctx.io.out(
    [
      `wrote a lango project in ${folder}:`,
      ...Object.keys(files).map((file) => `  ${file}`),
      '',
      'next:',
      `  ${cd ? `cd ${cd} && ` : ''}npm install && npm test && npm start`,
      '',
    ].join('\n'),
  );
  return ExitCode.ok;
}

/** DIR itself and the folders under it the files go in, where they are symbolic links. */
function linksOnTheWay(folder: string, files: string[]): string[] {
  const folders = new Set<string>([folder]);
  for (const file of files) {
    let at = path.dirname(path.join(folder, file));
    while (at.startsWith(folder + path.sep)) {
      folders.add(at);
      at = path.dirname(at);
    }
  }
  return [...folders].filter((at) => fs.lstatSync(at, { throwIfNoEntry: false })?.isSymbolicLink());
}

/**
 * Writes `file` under `folder`: each folder on the way made one level at a
 * time and checked to be a real folder, the file created new without
 * following a link (`O_EXCL | O_NOFOLLOW`), so a link that appears between
 * the check and the write fails the write instead of redirecting it.
 */
function writeInside(folder: string, file: string, content: string): void {
  fs.mkdirSync(folder, { recursive: true });
  let at = folder;
  for (const part of path
    .dirname(file)
    .split('/')
    .filter((p) => p && p !== '.')) {
    at = path.join(at, part);
    try {
      fs.mkdirSync(at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (!fs.lstatSync(at).isDirectory())
      throw new InputError(`${at} is not a folder; lango init writes only inside ${folder}`);
  }
  if (!fs.lstatSync(folder).isDirectory()) throw new InputError(`${folder} is not a folder`);
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  const fd = fs.openSync(path.join(folder, file), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
  try {
    fs.writeSync(fd, content);
  } finally {
    fs.closeSync(fd);
  }
}

/** A package name from the folder's name: lower case, letters, digits and dashes. */
function projectName(folder: string): string {
  return (
    path
      .basename(folder)
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'lango-node'
  );
}
