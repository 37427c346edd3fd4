import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CLI_MAIN, cliWorkdir, startServe, type CliProcess } from '../support/cliProcess';
import { skipUnless } from '../support/prerequisites';
import { TmuxTerminal } from '../support/tmux';

jest.setTimeout(120_000);

/** `lango chat …` as a shell command line for the terminal. */
function chatCommand(cwd: string, args = ''): string {
  return `env HOME=${cwd} LOG_LEVEL=error ${process.execPath} ${CLI_MAIN} chat ${args}`;
}

/** The states of the node's A2A tasks, oldest first. */
function taskStates(cwd: string): string[] {
  const db = new Database(path.join(cwd, '.lango', 'lango.db'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT status_state AS s FROM a2a_tasks ORDER BY rowid').all() as { s: string }[]).map(
      (r) => r.s,
    );
  } finally {
    db.close();
  }
}

// capture-pane drops trailing spaces: an empty prompt reads "you>".
const PROMPT = /^you>/m;
const HELLO = /lango-orchestrator: Hello!/;
const LONG = 'exec_shell {"command":"sleep 30"}';
const HISTORY = 'exec_shell {"command":"echo hist-$((6*7))"}';

const TITLE = 'lango chat in a real terminal (tmux)';

if (!skipUnless(TITLE, 'tmux'))
  describe(TITLE, () => {
    let cwd: string;
    let terminal: TmuxTerminal | undefined;
    let serve: CliProcess | undefined;
    beforeEach(() => {
      cwd = cliWorkdir();
    });
    afterEach(async () => {
      terminal?.close();
      terminal = undefined;
      await serve?.stop();
      serve = undefined;
      fs.rmSync(cwd, { recursive: true, force: true });
    });

    it('against the serving node: Ctrl-C cancels the turn there and the conversation goes on; Up recalls a line; Ctrl-C at the prompt exits', async () => {
      const started = await startServe(cwd);
      serve = started.serve;
      terminal = new TmuxTerminal(chatCommand(cwd), cwd);
      await terminal.waitForScreen(new RegExp(`talking to the node at ${started.url.replace(/[.]/g, '\\.')}`));
      await terminal.waitForScreen(PROMPT);
      terminal.type('hello');
      await terminal.waitForScreen(HELLO);

      terminal.type(LONG);
      // The call is shown with its arguments, and the spinner counts the seconds while the node works.
      await terminal.waitForScreen(/⚙ operator: exec_shell \{"command":"sleep 30"\}/);
      await terminal.waitForScreen(/working… \d+\.\ds/);
      terminal.send('C-c');
      await terminal.waitForScreen(/✗ cancelled — the conversation goes on/);
      await terminal.waitForScreen(PROMPT, 3);
      expect(taskStates(cwd)).toEqual(['TASK_STATE_COMPLETED', 'TASK_STATE_CANCELED']);

      terminal.type(HISTORY);
      await terminal.waitForScreen(/"stdout":"hist-42\\n"/);
      terminal.send('Up');
      terminal.send('Enter');
      await terminal.waitForScreen(/"stdout":"hist-42\\n"/, 2);
      expect(taskStates(cwd).slice(2)).toEqual(['TASK_STATE_COMPLETED', 'TASK_STATE_COMPLETED']);

      await terminal.waitForScreen(PROMPT, 5);
      terminal.send('C-c');
      expect(await terminal.exitStatus()).toBe(0);
      // The node serves on.
      expect(serve.child.exitCode).toBeNull();
    });

    it('in-process: Ctrl-C cancels the running turn, the next message is answered, Ctrl-D at the prompt exits', async () => {
      terminal = new TmuxTerminal(chatCommand(cwd), cwd);
      await terminal.waitForScreen(/talking to the node in this process/);
      await terminal.waitForScreen(PROMPT);
      terminal.type(LONG);
      await terminal.waitForScreen(/⚙ operator: exec_shell/);
      terminal.send('C-c');
      await terminal.waitForScreen(/✗ cancelled — the conversation goes on/);
      await terminal.waitForScreen(PROMPT, 2);
      terminal.type('hello');
      await terminal.waitForScreen(HELLO);
      await terminal.waitForScreen(PROMPT, 3);
      terminal.send('C-d');
      expect(await terminal.exitStatus()).toBe(0);
      // The folder is free again.
      expect(fs.existsSync(path.join(cwd, '.lango', 'lango.lock'))).toBe(false);
    });

    it('--json prints one JSON event per line, no prompt and no spinner', async () => {
      terminal = new TmuxTerminal(chatCommand(cwd, '--json'), cwd);
      // No prompt to wait for: the line is read once the node is up.
      terminal.type(HISTORY);
      const screen = await terminal.waitForScreen(/"type":"answer"/);
      terminal.send('C-d');
      expect(await terminal.exitStatus()).toBe(0);
      const events = screen
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { type: string; tool?: string; args?: string; text?: string });
      expect(events.map((e) => e.type)).toEqual(['transfer', 'tool_call', 'tool_result', 'answer']);
      expect(events[1]).toMatchObject({ tool: 'exec_shell', args: '{"command":"echo hist-$((6*7))"}' });
      expect(events[3].text).toContain('hist-42');
      expect(screen).not.toMatch(/you> |working…/);
    });
  });
