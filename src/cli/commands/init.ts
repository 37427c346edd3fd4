import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors';
import { ExitCode } from '../io';
import type { CliContext } from '../context';
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
 * naming them).
 */
export function registerInitCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  program
    .command('init')
    .description('write a project: a configuration, a custom tool and its test, ready for npm start')
    .argument('[dir]', 'the project folder (created when missing)', '.')
    .addHelpText('after', '\nExamples:\n  lango init my-node\n  cd my-node && npm install && npm test && npm start\n')
    .action((dir: string) => {
      const folder = path.resolve(ctx.cwd, dir);
      const { root, manifest } = langoPackage();
      const files = projectFiles({ name: projectName(folder), langoRoot: root, versions: versions(manifest) });
      const taken = Object.keys(files).filter((file) => fs.existsSync(path.join(folder, file)));
      if (taken.length)
        throw new InputError(`${folder} already has ${taken.join(', ')}; choose an empty folder (lango init DIR)`);
      for (const [file, content] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
        fs.writeFileSync(path.join(folder, file), content);
      }
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
      done(ExitCode.ok);
    });
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
