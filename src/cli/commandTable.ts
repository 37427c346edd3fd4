import type { Command } from 'commander';
import type { CliContext, GlobalOptions } from './context';
import type { CommandAction } from './commandRun';

/**
 * Every `lango` command as data: its name, arguments, options and help,
 * and where its action lives. Parsing the command line needs only this
 * table; a command's module (and all it imports) is loaded when that command
 * runs, so `lango --version` loads none of them (issue 35).
 */

/** One command of the table. */
interface CommandRow {
  /** `agents`, or `config check` for a command under a group. */
  name: string;
  description: string;
  arguments?: readonly { spec: string; description: string; default?: string }[];
  options?: readonly { flags: string; description: string }[];
  /** Shown after the command's own help: what it does in more words, and examples. */
  help?: string;
  /** Loads the command's module; only the command that runs is loaded. */
  action: () => Promise<CommandAction>;
}

/** The groups that only hold commands (`lango config check`). */
const GROUPS: Record<string, string> = { config: 'inspect the configuration' };

const JSON_OPTION = { flags: '--json', description: 'print JSON' };

/** The commands, in the order `lango --help` lists them. */
const COMMANDS: readonly CommandRow[] = [
  {
    name: 'serve',
    description: 'serve the agent card and the A2A protocol',
    help: '\nExamples:\n  lango serve\n  PORT=4001 lango --data-dir ./node-b serve   a second node: its own folder, port and configuration\n',
    action: async () => (await import('./commands/serve')).serve,
  },
  {
    name: 'chat',
    description: 'talk to the node: one message, or interactive when none is given',
    arguments: [{ spec: '[message...]', description: 'the message (interactive when omitted)' }],
    options: [
      {
        flags: '-s, --session <id>',
        description: 'continue a session (its A2A contextId when talking to a running node)',
      },
      { flags: '--json', description: 'print one JSON event per line (tool calls, results, remote calls, the answer)' },
    ],
    help: [
      '',
      'Talks to the node serving the data folder over A2A when one runs (or the one at --url);',
      'otherwise runs the node in this process, holding the folder until it ends.',
      '',
      'Examples:',
      '  lango chat                                  interactive: Ctrl-C cancels a turn, Ctrl-D leaves',
      '  lango chat hello',
      '  lango chat exec_shell \'{"command": "ls"}\'',
      '  lango chat --json "list my cron jobs"       one JSON event per line',
      '  lango --url http://127.0.0.1:18789 chat hi   a node elsewhere',
      '',
    ].join('\n'),
    action: async () => (await import('./commands/chat')).chat,
  },
  {
    name: 'agents',
    description: 'show the agent tree: agents, descriptions, tools, unmatched tools',
    options: [
      JSON_OPTION,
      { flags: '--instruction', description: "print the root agent's instruction" },
      {
        flags: '--format <format>',
        description: 'text (default), or a picture of the tree and federation: mermaid, dot, svg',
      },
      {
        flags: '--check',
        description:
          'probe each remote agent now and show its health (healthy, down, open circuit, skipped with reason, last error, latency), its skills, whether on-behalf-of works and the last hop',
      },
    ],
    help:
      '\nExamples:\n  lango agents\n  lango agents --check        exit 1 when a remote agent is unusable\n  lango agents --json\n' +
      '  lango agents --format mermaid\n  lango agents --format dot | dot -Tsvg > agents.svg\n' +
      '  lango --url https://agents.example.com agents   any A2A node: its catalog, else its card\n',
    action: async () => (await import('./commands/agents')).agents,
  },
  {
    name: 'card',
    description: "print the node's agent card (JSON)",
    options: [{ flags: '-o, --out <file>', description: 'write the card to a file (e.g. agent-cards/<name>.json)' }],
    help: '\nExamples:\n  lango card\n  lango card --out agent-cards/me.json\n  lango --url http://127.0.0.1:18789 card\n',
    action: async () => (await import('./commands/card')).card,
  },
  {
    name: 'config check',
    description: 'validate the configuration (exit 2 with one line per bad key)',
    action: async () => (await import('./commands/configCheck')).configCheck,
  },
  {
    name: 'doctor',
    description: 'report each tool family as on, off or broken, with the reason',
    options: [JSON_OPTION],
    action: async () => (await import('./commands/doctor')).doctor,
  },
  {
    name: 'tools',
    description: "list the node's tools: owner, description and arguments (one tool with NAME)",
    arguments: [{ spec: '[name]', description: 'show only this tool' }],
    options: [JSON_OPTION],
    help: '\nExamples:\n  lango tools\n  lango tools crypto_hash\n  lango tools --json',
    action: async () => (await import('./commands/tools')).tools,
  },
  {
    name: 'migrate',
    description: "apply the database schema (storage.url's PostgreSQL, else the SQLite file) and exit",
    action: async () => (await import('./commands/migrate')).migrate,
  },
  {
    name: 'init',
    description: 'write a project: a configuration, a custom tool and its test, ready for npm start',
    arguments: [{ spec: '[dir]', description: 'the project folder (created when missing)', default: '.' }],
    help: '\nExamples:\n  lango init my-node\n  cd my-node && npm install && npm test && npm start\n',
    action: async () => (await import('./commands/init')).init,
  },
];

/**
 * Declares every command of the table on `program`; a command's action
 * loads its module, runs it and hands its exit code to `done`.
 */
export function registerCommands(program: Command, ctx: CliContext, done: (code: number) => void): void {
  const groups = new Map<string, Command>();
  for (const row of COMMANDS) {
    const words = row.name.split(' ');
    let parent = program;
    for (const group of words.slice(0, -1)) {
      let command = groups.get(group);
      if (!command) {
        command = program.command(group).description(GROUPS[group] ?? '');
        groups.set(group, command);
      }
      parent = command;
    }
    const command = parent.command(words[words.length - 1]!).description(row.description);
    for (const argument of row.arguments ?? []) command.argument(argument.spec, argument.description, argument.default);
    for (const option of row.options ?? []) command.option(option.flags, option.description);
    if (row.help) command.addHelpText('after', row.help);
    command.action(async (...received: unknown[]) => {
      // commander passes the arguments, then the command's options, then the command itself.
      const args = received.slice(0, -2);
      const options = received[received.length - 2] as Record<string, unknown>;
      const action = await row.action();
      done(await action({ ctx, globals: program.opts<GlobalOptions>(), args, options }));
    });
  }
}
