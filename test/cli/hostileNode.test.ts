import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI_MAIN, spawnCli } from '../support/cliProcess';
import { HOSTILE_SHOWN, HOSTILE_TEXT, startHostileNode, type HostileNode } from '../support/hostileNode';
import { itNeeding } from '../support/prerequisites';
import { TmuxTerminal } from '../support/tmux';

jest.setTimeout(120_000);

/** A control character the CLI must never print raw: C0 but newline and tab, DEL, C1. */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** Runs the built CLI against the hostile node with stdout a pipe; resolves with what it printed. */
async function piped(args: string[], cwd: string): Promise<{ code: number | null; out: string; err: string }> {
  const cli = spawnCli(args, cwd, { LOG_LEVEL: 'error' });
  const code = await cli.exited;
  return { code, out: cli.stdout(), err: cli.stderr() };
}

/** Issue 28, item 5: nothing a node or peer sends reaches the terminal raw. */
describe('the CLI against a hostile node', () => {
  let node: HostileNode;
  let cwd: string;
  beforeAll(async () => {
    node = await startHostileNode();
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-hostile-'));
  });
  afterAll(async () => {
    await node.close();
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('chat --url to a pipe: answers, names, progress and errors escaped visibly', async () => {
    const answered = await piped(['--url', node.url, 'chat', 'hello'], cwd);
    expect(answered.code).toBe(0);
    expect(RAW_CONTROL.test(answered.out + answered.err)).toBe(false);
    expect(answered.out).toContain(`evil\\x1b]0;PWNED-TITLE\\x07\\x1b[31m: ${HOSTILE_SHOWN}`);
    expect(answered.out).toContain('⚙ evil\\x1b]0;PWNED-TITLE\\x07\\x1b[31m: tool\\x1b[2J\\x1b[H');
    const failed = await piped(['--url', node.url, 'chat', 'please fail'], cwd);
    expect(failed.code).toBe(1);
    expect(RAW_CONTROL.test(failed.out + failed.err)).toBe(false);
    expect(failed.out).toContain(`✗ failed: ${HOSTILE_SHOWN}`);
  });

  it('--json stays JSON carrying the same data, with no raw control character', async () => {
    const { code, out } = await piped(['--url', node.url, 'chat', '--json', 'hello'], cwd);
    expect(code).toBe(0);
    expect(RAW_CONTROL.test(out)).toBe(false);
    const events = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; text?: string });
    expect(events.find((event) => event.type === 'answer')?.text).toBe(HOSTILE_TEXT);
    const card = await piped(['--url', node.url, 'card'], cwd);
    expect(RAW_CONTROL.test(card.out)).toBe(false);
    expect((JSON.parse(card.out) as { description: string }).description).toBe(HOSTILE_TEXT);
  });

  it('agents --url and tools --url: names, descriptions, capabilities and errors escaped', async () => {
    const agents = await piped(['--url', node.url, 'agents'], cwd);
    expect(agents.code).toBe(0);
    expect(RAW_CONTROL.test(agents.out + agents.err)).toBe(false);
    expect(agents.out).toContain('peer\\x1b]52;c;aGFja2Vk\\x07 (remote: http://127.0.0.1:9/\\x1b[31m) healthy');
    expect(agents.out).toContain(`    ${HOSTILE_SHOWN}`);
    expect(agents.out).toContain('HTTP 403: go away\\x1b[2J\\x1b[H');
    const tools = await piped(['--url', node.url, 'tools'], cwd);
    expect(tools.code).toBe(0);
    expect(RAW_CONTROL.test(tools.out)).toBe(false);
    expect(tools.out).toContain(
      `tool\\x1b]0;PWNED-TITLE\\x07  → evil\\x1b]0;PWNED-TITLE\\x07\\x1b[31m\n  ${HOSTILE_SHOWN}`,
    );
  });

  itNeeding('tmux')('chat --url in a terminal (tmux): the pane shows the escapes, and nothing happened', async () => {
    const command = `echo BEFORE-HOSTILE; env HOME=${cwd} LOG_LEVEL=error ${process.execPath} ${CLI_MAIN} --url ${node.url} chat`;
    const terminal = new TmuxTerminal(command, cwd);
    try {
      // An application may write the clipboard in this terminal: a raw OSC 52 would land in a buffer.
      terminal.setOption('set-clipboard', 'on');
      await terminal.waitForScreen(/^you>/m);
      const title = terminal.title();
      terminal.type('hello');
      await terminal.waitForScreen(/safe-end/, 2);
      terminal.type('please fail');
      await terminal.waitForScreen(/✗ failed: safe-start/);
      await terminal.waitForScreen(/^you>/m, 3);

      const screen = terminal.screen();
      expect(screen).toContain(`evil\\x1b]0;PWNED-TITLE\\x07\\x1b[31m: ${HOSTILE_SHOWN}`);
      expect(screen).toContain(`✗ failed: ${HOSTILE_SHOWN}`);
      // No effect: the title is the same, the screen was not cleared, the clipboard not written.
      expect(terminal.title()).toBe(title);
      expect(terminal.title()).not.toMatch(/PWNED|C1-TITLE/);
      expect(terminal.visible()).toContain('BEFORE-HOSTILE');
      expect(terminal.buffers()).toBe('');
      terminal.send('C-d');
      expect(await terminal.exitStatus()).toBe(0);
    } finally {
      terminal.close();
    }
  });
});
