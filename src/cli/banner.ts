import path from 'node:path';
import type { LangoConfig } from '../config/schema';

/** What the start banner names. */
export interface BannerInput {
  config: LangoConfig;
  url: string;
  /** The configuration file read (undefined: defaults only). */
  file?: string;
  /** A file discovery found but did not read: another data folder's. */
  notRead?: { file: string; dataDir: string };
  dataDir: string;
  ownerTokenFile: string;
  /** The card's agent name. */
  name: string;
  /** The working directory: paths under it are shown relative. */
  cwd: string;
}

/**
 * The start line for a person at a terminal (issue 34, 7): where the node
 * listens, its console, its card, its model, and which configuration and
 * data folder it runs on. Piped, the node logs its JSON line instead.
 * @example
 * io.err(startBanner({ config, url, file, dataDir, ownerTokenFile, name: 'hub', cwd }));
 */
export function startBanner(input: BannerInput): string {
  const { config, url } = input;
  const shown = (file: string) => {
    const relative = path.relative(input.cwd, file);
    return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? `./${relative}` : file;
  };
  const agent = config.agent;
  const model =
    agent.provider === 'openai'
      ? `${agent.model} at ${agent.baseUrl ?? 'https://api.openai.com/v1'}`
      : 'offline (built in, no network; set agent.provider and agent.apiKey for a real one)';
  const signIn = config.a2a.auth ? `   sign in with the token in ${shown(input.ownerTokenFile)}` : '';
  const lines = [
    `lango node ${input.name} at ${url}`,
    ...(config.observability.console ? [`  console  ${url}/console${signIn}`] : []),
    ...(config.a2a.enabled
      ? [`  card     ${url}/.well-known/agent-card.json`]
      : ['  A2A      off (a2a.enabled: false)']),
    `  model    ${model}`,
    `  config   ${input.file ? shown(input.file) : 'none (defaults)'}; data ${shown(input.dataDir)}`,
    ...(input.notRead ? [`           (${notReadNote(input.notRead, shown)})`] : []),
    'Ctrl-C stops it.',
  ];
  return lines.join('\n') + '\n';
}

/** Why a discovered configuration file was not read, and how to read it anyway. */
export function notReadNote(
  notRead: { file: string; dataDir: string },
  shown: (file: string) => string = (f) => f,
): string {
  return (
    `${shown(notRead.file)} is not read: it is the configuration of the node of ${shown(notRead.dataDir)}; ` +
    `give --config ${shown(notRead.file)} to use it for this one`
  );
}
