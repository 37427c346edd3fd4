import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ApprovalRequired, type AnyTool } from '../../src/agent/tool';
import { runCli } from '../../src/cli/main';
import type { LangoConfigInput } from '../../src/config/schema';
import { execFamily, skillsFamily } from '../../src/tools/operator/family';
import { bwrapArguments, createSandbox } from '../../src/tools/operator/sandbox';
import { secretsFamily } from '../../src/tools/vault/family';
import { MASTER_KEY_FILE } from '../../src/vault/masterKey';
import { namedCaller } from '../../src/principal';
import { byName, callTool, tempDir, toolContext } from '../tools/operator/context';
import { familyDeps } from '../tools/operator/deps';
import { processesWith } from '../support/processes';
import { waitFor } from '../support/waitFor';

/**
 * Escapes tried through the real exec tools, background jobs and script
 * skills, confined by the real bubblewrap (`.ci/apt-packages` installs it):
 * the data directory (master key, database) must not exist for a command,
 * nothing outside the workspace may be written, the network is off unless
 * configured, and no secret of the node's environment reaches a command.
 */

type Deps = Awaited<ReturnType<typeof familyDeps>>;

describe('commands run in a bubblewrap sandbox', () => {
  let dir: string;
  let cleanup: () => void;
  let deps: Deps;
  let shell: AnyTool;
  let execTools: AnyTool[];
  let ws: string;
  let closeFamily: () => unknown;

  async function setUp(input: Omit<LangoConfigInput, 'dataDir'> = {}, dataDir = dir) {
    deps = await familyDeps(dataDir, input);
    // The vault writes its master key file into the data directory, as in a real node.
    await callTool(byName((await secretsFamily.create(deps)).tools, 'secrets_store'), {
      name: 'API_TOKEN',
      value: 'vault-secret-value',
    });
    const family = await execFamily.create(deps);
    closeFamily = () => family.close?.();
    execTools = family.tools;
    shell = byName(family.tools, 'exec_shell');
    ws = fs.realpathSync(path.join(dataDir, 'workspace'));
  }

  beforeEach(() => {
    ({ dir, cleanup } = tempDir('lango-sbx-'));
  });
  afterEach(async () => {
    await closeFamily?.();
    await deps?.close();
    cleanup();
  });

  it('does not show the master key, the database or anything else of the data directory', async () => {
    await setUp();
    const key = path.join(dir, MASTER_KEY_FILE);
    expect(fs.existsSync(key)).toBe(true);
    const result = await callTool(shell, {
      command: `cat ${key}; cat ${path.join(dir, 'lango.db')} | head -c 16; ls -A ${dir}; ls -A ${dir}/..`,
    });
    expect(result.stdout).not.toContain(fs.readFileSync(key, 'utf8').trim());
    expect(result.stdout).not.toContain('SQLite format');
    expect(result.stderr).toContain(`cat: ${key}: No such file or directory`);
    // The data directory only holds the way to the workspace; its parent only the data directory.
    expect(result.stdout.trim().split('\n')).toEqual(['workspace', path.basename(dir)]);
  });

  it('refuses every write outside the workspace and keeps writes inside it', async () => {
    await setUp();
    const outside = ['/lango-probe', '/etc/lango-probe', '/usr/lango-probe', `${dir}/probe`, `${ws}/../probe`];
    const result = await callTool(shell, {
      command: `${outside.map((f) => `touch ${f} 2>/dev/null && echo "wrote ${f}"`).join('; ')}; touch made-inside; echo done`,
    });
    expect(result.stdout).toBe('done\n');
    for (const file of outside) expect(fs.existsSync(file)).toBe(false);
    expect(fs.existsSync(path.join(ws, 'made-inside'))).toBe(true);
  });

  it('gives commands a private /tmp that vanishes with them', async () => {
    await setUp();
    const marker = `lango-sbx-${path.basename(dir)}`;
    const result = await callTool(shell, { command: `echo x > /tmp/${marker} && cat /tmp/${marker}` });
    expect(result.stdout).toBe('x\n');
    expect(fs.existsSync(`/tmp/${marker}`)).toBe(false);
  });

  it('hands commands no secret of the node: not its environment, not another process', async () => {
    const saved = { ...process.env };
    process.env.LANGO_MASTER_KEY = 'master-key-in-env';
    process.env.OPENAI_API_KEY = 'sk-env-secret';
    try {
      await setUp();
      const result = await callTool(shell, {
        command: `env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; ls /proc | grep -c '^[0-9]'; cat /proc/${process.pid}/environ`,
      });
      expect(result.stdout).not.toMatch(/master-key-in-env|sk-env-secret|LANGO_MASTER_KEY|OPENAI_API_KEY/);
      // Only the command's own processes are visible (bubblewrap's init, the shell and its pipeline).
      const visible = Number(result.stdout.trim().split('\n').at(-1));
      expect(visible).toBeLessThan(8);
      expect(result.stderr).toContain(`/proc/${process.pid}/environ: No such file or directory`);
    } finally {
      process.env = saved;
    }
  });

  it('hands a bound vault secret to the command that references it, and masks it in the output', async () => {
    await setUp();
    const result = await callTool(shell, { command: 'echo "token={{secret:API_TOKEN}}"' });
    expect(result.stdout).toBe('token=[REDACTED]\n');
  });

  it('keeps the network off unless tools.exec.network opens it', async () => {
    const accepted: net.Socket[] = [];
    const server = net.createServer((socket) => {
      accepted.push(socket);
      socket.end('hello from the host\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const connect =
      `node -e "const s=require('net').connect(${port},'127.0.0.1');` +
      `s.on('data',d=>process.stdout.write(String(d)));s.on('error',e=>console.log(e.code))"`;
    try {
      await setUp();
      const closed = await callTool(shell, { command: connect });
      expect(closed.stdout).toBe('ECONNREFUSED\n');
      expect(accepted).toHaveLength(0);
      await closeFamily();
      await deps.close();

      await setUp({ tools: { exec: { network: true } } });
      const open = await callTool(shell, { command: connect });
      expect(open.stdout).toBe('hello from the host\n');
      expect(accepted).toHaveLength(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('kills the whole sandboxed tree on timeout, even processes that left its session', async () => {
    await setUp();
    const marker = `3${Math.floor(Math.random() * 1e6)}.25`;
    // Sleeps of days: the call ends by the timeout's kill or not at all.
    const result = await callTool(shell, {
      command: `sleep ${marker} & setsid sleep ${marker} & nohup sleep ${marker} >/dev/null 2>&1 & sleep ${marker}`,
      timeoutMs: 500,
    });
    expect(result.timedOut).toBe(true);
    await waitFor(() => processesWith(`sleep ${marker}`).length === 0, 20_000, '0 sandboxed sleeps');
  });

  it('caps the output of a confined command', async () => {
    await setUp({ tools: { exec: { maxOutputBytes: 100 } } });
    const result = await callTool(shell, { command: 'seq 1 1000' });
    expect(result.truncated).toBe(true);
    expect(result.stdout.endsWith('999\n1000\n')).toBe(true);
  });

  it('confines background jobs the same way, and exec_stop ends their whole tree', async () => {
    await setUp();
    const tools = execTools;
    const marker = `4${Math.floor(Math.random() * 1e6)}.5`;
    const job = await callTool(byName(tools, 'exec_bg'), {
      command: `cat ${path.join(dir, MASTER_KEY_FILE)}; touch ${dir}/bg-probe; setsid sleep ${marker} & sleep ${marker}`,
    });
    await waitFor(() => processesWith(`sleep ${marker}`).length === 2, 20_000, '2 sandboxed sleeps');
    const stopped = await callTool(byName(tools, 'exec_stop'), { id: job.id });
    expect(stopped.status).toBe('stopped');
    expect(stopped.output).toContain('No such file or directory');
    expect(fs.existsSync(`${dir}/bg-probe`)).toBe(false);
    await waitFor(() => processesWith(`sleep ${marker}`).length === 0, 20_000, '0 sandboxed sleeps');
  });

  it('leaves nothing behind when a job is stopped in its first milliseconds', async () => {
    await setUp();
    const marker = `5${Math.floor(Math.random() * 1e6)}.5`;
    for (let i = 0; i < 20; i += 1) {
      const job = await callTool(byName(execTools, 'exec_bg'), {
        command: `setsid sleep ${marker} & sleep ${marker}`,
      });
      const stopped = await callTool(byName(execTools, 'exec_stop'), { id: job.id });
      expect(stopped.status).toBe('stopped');
    }
    await waitFor(() => processesWith(`sleep ${marker}`).length === 0, 20_000, '0 sandboxed sleeps');
  });

  it('hides the data directory when tools.fs.root is configured around it', async () => {
    const root = path.join(dir, 'project');
    const dataDir = path.join(root, '.lango');
    fs.mkdirSync(dataDir, { recursive: true });
    deps = await familyDeps(dataDir, { tools: { fs: { root } } });
    await secretsFamily.create(deps);
    const family = await execFamily.create(deps);
    closeFamily = () => family.close?.();
    const tool = byName(family.tools, 'exec_shell');
    const result = await callTool(tool, {
      command: `ls -A .lango; cat .lango/${MASTER_KEY_FILE}; touch .lango/x 2>/dev/null || echo refused; touch ok`,
    });
    expect(result.stdout).toBe('refused\n');
    expect(result.stderr).toContain('No such file or directory');
    expect(fs.existsSync(path.join(dataDir, 'x'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'ok'))).toBe(true);
  });
});

describe('script skills run in the same sandbox', () => {
  it('sees its own folder read-only and nothing else of the data directory', async () => {
    const { dir, cleanup } = tempDir('lango-sbx-skill-');
    const deps = await familyDeps(dir);
    try {
      await secretsFamily.create(deps);
      const skillDir = path.join(dir, 'skills', 'peek');
      fs.mkdirSync(skillDir, { recursive: true });
      fs.writeFileSync(path.join(skillDir, 'helper.txt'), 'helper content\n');
      fs.writeFileSync(
        path.join(skillDir, 'SKILL.md'),
        '---\nname: peek\ndescription: tries to look around\n---\n```sh\n' +
          'cat "$SKILL_DIR/helper.txt"; ls -A "$SKILL_DIR/.."; cat ' +
          path.join(dir, MASTER_KEY_FILE) +
          '; touch "$SKILL_DIR/new" 2>/dev/null || echo read-only\n```\n',
      );
      const family = await skillsFamily.create(deps);
      try {
        const result = await callTool(byName(family.tools, 'skill_peek'), {});
        expect(result.stdout).toBe('helper content\npeek\nread-only\n');
        expect(result.stderr).toContain('No such file or directory');
      } finally {
        await family.close?.();
      }
    } finally {
      await deps.close();
      cleanup();
    }
  });
});

describe('without a usable sandbox', () => {
  let dir: string;
  let cleanup: () => void;
  let deps: Deps | undefined;
  beforeEach(() => ({ dir, cleanup } = tempDir('lango-nosbx-')));
  afterEach(async () => {
    await deps?.close();
    deps = undefined;
    cleanup();
  });

  /** A stand-in for bubblewrap on a kernel without unprivileged user namespaces. */
  function failingBwrap(): string {
    const file = path.join(dir, 'bwrap');
    fs.writeFileSync(
      file,
      '#!/bin/sh\necho "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n',
      { mode: 0o755 },
    );
    return file;
  }

  it('falls back to asking before every command, allow-listed or not, when bwrap fails its self-test', async () => {
    deps = await familyDeps(dir, { tools: { exec: { bwrapPath: failingBwrap(), allow: ['echo'] } } });
    const family = await execFamily.create(deps);
    const shell = byName(family.tools, 'exec_shell');
    const refused = callTool(shell, { command: 'echo hi' });
    await expect(refused).rejects.toBeInstanceOf(ApprovalRequired);
    await expect(refused).rejects.toThrow(/There is no sandbox \(.*No permissions to create new namespace/);
    await expect(callTool(byName(family.tools, 'exec_bg'), { command: 'echo hi' })).rejects.toBeInstanceOf(
      ApprovalRequired,
    );
    const approved = await callTool(shell, { command: 'echo hi' }, toolContext({ approved: true }));
    expect(approved.stdout).toBe('hi\n');
    expect(deps.logger.records.some((r) => r.message === 'commands are not sandboxed')).toBe(true);
  });

  it("refuses a named caller's commands outright, approved or not: only the owner may run unconfined", async () => {
    deps = await familyDeps(dir, { tools: { exec: { bwrapPath: failingBwrap(), allow: ['echo'] } } });
    const family = await execFamily.create(deps);
    const peer = namedCaller('peer', { specialists: 'all', remoteAgents: 'all', toolFamilies: 'all' });
    for (const name of ['exec_shell', 'exec_bg']) {
      const refused = callTool(
        byName(family.tools, name),
        { command: 'echo hi' },
        toolContext({ approved: true, principal: peer }),
      );
      await expect(refused).rejects.toThrow(
        /command refused: there is no sandbox .*only the node's owner may run commands/,
      );
    }
    await family.close?.();
  });

  it('keeps policy deny: a command off the allow-list is refused, approval or not', async () => {
    deps = await familyDeps(dir, {
      tools: { exec: { bwrapPath: '/nonexistent/bwrap', policy: 'deny', allow: ['echo'] } },
    });
    const shell = byName((await execFamily.create(deps)).tools, 'exec_shell');
    await expect(callTool(shell, { command: 'ls' }, toolContext({ approved: true }))).rejects.toThrow(
      'not on the allow-list',
    );
    await expect(callTool(shell, { command: 'echo hi' })).rejects.toBeInstanceOf(ApprovalRequired);
  });

  it('asks before a script skill runs', async () => {
    deps = await familyDeps(dir, { tools: { exec: { sandbox: 'off' } } });
    fs.mkdirSync(path.join(dir, 'skills', 'hi'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'skills', 'hi', 'SKILL.md'),
      '---\nname: hi\ndescription: says hi\n---\n```sh\necho hi\n```\n',
    );
    const family = await skillsFamily.create(deps);
    try {
      await expect(callTool(byName(family.tools, 'skill_hi'), {})).rejects.toThrow(
        /There is no sandbox \(tools\.exec\.sandbox is off\)/,
      );
    } finally {
      await family.close?.();
    }
  });

  it('refuses to create the exec and skills families when tools.exec.sandbox is bwrap', async () => {
    deps = await familyDeps(dir, { tools: { exec: { sandbox: 'bwrap', bwrapPath: failingBwrap() } } });
    await expect(execFamily.create(deps)).rejects.toThrow(
      /^tools\.exec\.sandbox is bwrap but bubblewrap is unusable: .*bwrap failed its self-test \(exit 1\): bwrap: No permissions/,
    );
    await expect(skillsFamily.create(deps)).rejects.toThrow('tools.exec.sandbox is bwrap but bubblewrap is unusable');
  });

  it('names a missing bubblewrap binary', async () => {
    const sandbox = await createSandbox({
      mode: 'auto',
      bwrapPath: '/nonexistent/bwrap',
      network: false,
      workspace: dir,
      dataDir: path.join(dir, 'data'),
    });
    expect(sandbox.status).toEqual({
      confined: false,
      commands: 'ask',
      reason: 'no bubblewrap at /nonexistent/bwrap (install the bubblewrap package or set tools.exec.bwrapPath)',
    });
  });
});

describe('bubblewrap arguments', () => {
  it('hides a data directory that lies inside a bound system folder behind an empty read-only tmpfs', () => {
    const args = bwrapArguments({
      network: false,
      workspace: '/etc/lango/workspace',
      dataDir: '/etc/lango',
      cwd: '/etc/lango/workspace',
    });
    const at = (flag: string, value: string) => args.findIndex((a, i) => a === flag && args[i + 1] === value);
    expect(at('--tmpfs', '/etc/lango')).toBeGreaterThan(at('--ro-bind', '/etc'));
    expect(at('--bind', '/etc/lango/workspace')).toBeGreaterThan(at('--tmpfs', '/etc/lango'));
    expect(at('--remount-ro', '/etc/lango')).toBeGreaterThan(at('--bind', '/etc/lango/workspace'));
    expect(args).toEqual(expect.arrayContaining(['--unshare-all', '--die-with-parent', '--new-session']));
    expect(args).not.toContain('--share-net');
    expect(args.slice(-4)).toEqual(['--remount-ro', '/etc/lango', '--remount-ro', '/']);
  });
});

describe('lango doctor', () => {
  async function doctor(config: string, json = false) {
    const { dir: cwd, cleanup } = tempDir('lango-doctor-');
    fs.writeFileSync(path.join(cwd, 'lango.config.yaml'), `tools:\n  browser: { enabled: false }\n${config}`);
    let out = '';
    try {
      const code = await runCli(json ? ['doctor', '--json'] : ['doctor'], {
        io: { out: (s) => void (out += s), err: () => {} },
        env: { LOG_LEVEL: 'error' },
        cwd,
        stopSignal: new Promise(() => {}),
      });
      return { code, out };
    } finally {
      cleanup();
    }
  }

  it('says commands are sandboxed, and whether they have the network', async () => {
    const { code, out } = await doctor('');
    expect(code).toBe(0);
    expect(out).toContain('sandbox: bubblewrap (data directory hidden, root read-only, network off)\n');
    const json = JSON.parse((await doctor('  exec: { network: true }\n', true)).out) as { sandbox: unknown };
    expect(json.sandbox).toEqual({ confined: true, kind: 'bwrap', network: true });
  });

  it('says clearly when commands are not sandboxed, and why', async () => {
    const { code, out } = await doctor('  exec: { bwrapPath: /nonexistent/bwrap }\n');
    expect(code).toBe(0);
    expect(out).toContain(
      'sandbox: none, commands are NOT confined: no bubblewrap at /nonexistent/bwrap (install the bubblewrap ' +
        "package or set tools.exec.bwrapPath); every command needs the user's approval (policy ask)\n",
    );
    const strict = await doctor('  exec: { sandbox: bwrap, bwrapPath: /nonexistent/bwrap }\n');
    expect(strict.code).toBe(1);
    expect(strict.out).toMatch(/sandbox: none, commands are NOT confined: .*; commands are refused\n/);
  });
});
