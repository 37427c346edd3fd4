import fs from 'node:fs';
import path from 'node:path';
import { keyPath } from './issues';

/**
 * The two places the configuration names other files, each read relative to
 * one folder: which data folder a discovered file belongs to, and where a
 * remote agent's `cardFile` is.
 */

/** The data folder a configuration names when it names none (the schema's default). */
export const DEFAULT_DATA_DIR = './.lango';

/**
 * Whether a configuration file found by discovery (`./lango.config.yaml`,
 * not named by `--config` or `LANGO_CONFIG`) belongs to the node being
 * started (issue 34, 7): it is the configuration of the data folder it
 * names (its `dataDir`, else `./.lango`, from the working directory). When
 * `--data-dir` or `LANGO_DATA_DIR` gives another folder, that is another
 * node, and the file is not its: the README's peer restarted in the hub's
 * folder would otherwise become a second hub pointing at itself.
 * @returns the folder the file belongs to when it is another node's, else undefined.
 */
export function otherNodesFile(raw: unknown, givenDataDir: string | undefined, cwd: string): string | undefined {
  if (!givenDataDir) return undefined;
  const named = (raw as { dataDir?: unknown } | undefined)?.dataDir;
  const own = path.resolve(cwd, typeof named === 'string' && named ? named : DEFAULT_DATA_DIR);
  return own === path.resolve(cwd, givenDataDir) ? undefined : own;
}

/**
 * Resolves each remote agent's `cardFile` (issue 34, 7) against `baseDir`,
 * the configuration file's folder: a bare file name is a card in the
 * `agent-cards/` folder beside the file, anything else (`./peer.json`,
 * `cards/peer.json`, an absolute path) a path from that folder. The entry
 * gets the absolute path; one that is not a file is a problem at its key
 * path (an entry with `enabled: false` is not loaded, so not checked).
 */
export function resolveCardFiles(input: unknown, baseDir: string, problems: string[]): void {
  const entries = (input as { a2a?: { remoteAgents?: unknown } } | undefined)?.a2a?.remoteAgents;
  if (!Array.isArray(entries)) return;
  entries.forEach((entry: unknown, index) => {
    if (!entry || typeof entry !== 'object') return;
    const fields = entry as { cardFile?: unknown; enabled?: unknown };
    if (typeof fields.cardFile !== 'string' || fields.cardFile === '') return;
    const given = fields.cardFile;
    const bare = !/[/\\]/.test(given);
    const file = bare ? path.join(baseDir, 'agent-cards', given) : path.resolve(baseDir, given);
    fields.cardFile = file;
    if (fields.enabled === false || fs.statSync(file, { throwIfNoEntry: false })?.isFile()) return;
    problems.push(
      `${keyPath(['a2a', 'remoteAgents', index, 'cardFile'])}: no card file at ${file} ` +
        `(${bare ? 'a file name is looked up in agent-cards/ beside the configuration file' : "a path is read from the configuration file's folder"})`,
    );
  });
}
