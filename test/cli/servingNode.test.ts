import fs from 'node:fs';
import { CLI_MAIN, cliWorkdir, runCliInProcess, startServe, type CliProcess } from '../support/cliProcess';
import { skipUnless } from '../support/prerequisites';
import { TmuxTerminal } from '../support/tmux';

jest.setTimeout(180_000);

/** What a terminal shows of `text`: capture-pane drops trailing spaces and the final newline. */
const asShown = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trimEnd();

const TITLE = 'the CLI while a node serves, in a real terminal (tmux)';

/** Issue 28, item 2: `tools`, `doctor` and `agents` give the full answer while a node serves the folder. */
if (!skipUnless(TITLE, 'tmux'))
  describe(TITLE, () => {
    let cwd: string;
    let serve: CliProcess | undefined;
    const terminals: TmuxTerminal[] = [];
    beforeAll(() => {
      cwd = cliWorkdir();
    });
    afterAll(async () => {
      for (const terminal of terminals) terminal.close();
      await serve?.stop();
      fs.rmSync(cwd, { recursive: true, force: true });
    });

    /** `lango ARGS` in a terminal of its own: what it showed and its exit status. */
    async function inTerminal(args: string): Promise<{ screen: string; code: number }> {
      const terminal = new TmuxTerminal(`env HOME=${cwd} LOG_LEVEL=error ${process.execPath} ${CLI_MAIN} ${args}`, cwd);
      terminals.push(terminal);
      const code = await terminal.exitStatus();
      // tmux marks the exited pane with a line of its own: the command's output is what comes before it.
      const screen = terminal.screen().split(/\nPane is dead/)[0]!;
      return { screen: asShown(screen), code };
    }

    it('prints exactly what the commands print in-process, with the same exit codes', async () => {
      const commands = ['tools', 'tools crypto_hash', 'doctor', 'agents', 'agents --check', 'agents --json'];
      // In this process first, holding the folder for the time of each command.
      const inProcess = new Map<string, { out: string; code: number }>();
      for (const command of commands) {
        const { out, err, code } = await runCliInProcess(command.split(' '), cwd);
        expect([command, err]).toEqual([command, '']);
        inProcess.set(command, { out, code });
      }

      const started = await startServe(cwd);
      serve = started.serve;
      for (const command of commands) {
        const expected = inProcess.get(command)!;
        const shown = await inTerminal(command);
        expect({ command, screen: shown.screen, code: shown.code }).toEqual({
          command,
          screen: asShown(expected.out),
          code: expected.code,
        });
      }
      // The full answer, not a stand-in: tool lists, the families and the sandbox line.
      expect(inProcess.get('agents')!.out).toMatch(/^ {4}tools: exec_shell, /m);
      expect(inProcess.get('doctor')!.out).toMatch(/^sandbox: /m);
      expect(inProcess.get('tools crypto_hash')!.out.split('\n')[0]).toBe('crypto_hash  → vault');
      // The node did the work: the folder stayed its own throughout.
      expect(serve.child.exitCode).toBeNull();
    });

    it('names --data-dir and LANGO_DATA_DIR when a second node is refused the folder, and takes either', async () => {
      const second = await inTerminal('serve');
      expect(second.code).toBe(2);
      expect(second.screen).toContain(
        'one node per data folder: give this one another with --data-dir DIR or LANGO_DATA_DIR=DIR',
      );
      const elsewhere = await runCliInProcess(['--data-dir', 'other', 'doctor'], cwd);
      expect(elsewhere.out).toContain(`data: ${cwd}/other\n`);
      const byEnv = await runCliInProcess(['doctor'], cwd, { LANGO_DATA_DIR: `${cwd}/by-env` });
      expect(byEnv.out).toContain(`data: ${cwd}/by-env\n`);
    });
  });
