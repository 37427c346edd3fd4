import fs from 'node:fs';
import path from 'node:path';
import { cliWorkdir } from '../support/cliProcess';
import { Terminals } from '../support/cliTerminal';
import { tmuxUnavailable } from '../support/tmux';

jest.setTimeout(240_000);

const noTmux = tmuxUnavailable();
if (noTmux) process.stderr.write(`skipping the terminal tests: ${noTmux}\n`);

/** The README's own auth example ("Configuration"), as written. */
const README_AUTH = 'a2a:\n  agentName: hub\n  auth: { bearerTokens: ["${HUB_TOKEN}"] }\n';
const HUB_TOKEN = 'hub-token-from-the-readme-0123';

/** Issue 37, item 5: the owner is locked out of nothing with the README's auth example. */
(noTmux ? describe.skip : describe)(
  `the README's auth example with the CLI, in real terminals (tmux)${noTmux ? ` (skipped: ${noTmux})` : ''}`,
  () => {
    const terminals = new Terminals();
    let cwd: string;
    beforeAll(() => {
      cwd = cliWorkdir(README_AUTH);
    });
    afterAll(() => {
      terminals.closeAll();
      fs.rmSync(cwd, { recursive: true, force: true });
    });

    it('chat, agents, tools and doctor in the node’s folder, and the console sign-in with the owner token', async () => {
      const env = { HUB_TOKEN };
      const node = await terminals.serve(cwd, env);
      // The banner says where the owner token is; the token is the user's alone.
      await node.terminal.waitForScreen(
        /console {2}http:\/\/127\.0\.0\.1:\d+\/console {3}sign in with the token in \.\/\.lango\/owner\.token/,
      );
      const tokenFile = path.join(cwd, '.lango', 'owner.token');
      expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);

      const chat = await terminals.run('chat hello', cwd, env);
      expect(chat).toMatchObject({ code: 0 });
      expect(chat.screen).toMatch(/^lango-orchestrator: Hello!/m);
      const agents = await terminals.run('agents', cwd, env);
      expect(agents.code).toBe(0);
      // The owner's full report (tools, families), not the public catalog.
      expect(agents.screen).toMatch(/^ {4}tools: exec_shell, /m);
      const tools = await terminals.run('tools crypto_hash', cwd, env);
      expect(tools).toMatchObject({ code: 0 });
      expect(tools.screen.split('\n')[0]).toBe('crypto_hash  → vault');
      const doctor = await terminals.run('doctor', cwd, env);
      expect(doctor.code).toBe(0);
      expect(doctor.screen).toMatch(/^sandbox: /m);

      // Elsewhere the README's token is a caller of the node: it talks; the owner's reports say what they need.
      const asCaller = await terminals.run(`--url ${node.url} chat hello`, cwd, { LANGO_TOKEN: HUB_TOKEN });
      expect(asCaller.code).toBe(0);
      expect(asCaller.screen).toMatch(/^lango-orchestrator: Hello!/m);
      const refused = await terminals.run(`--url ${node.url} --token ${HUB_TOKEN} tools`, cwd);
      expect(refused.code).toBe(1);
      expect(refused.screen).toMatch(/\(HTTP 403: only the node owner may look.*\); its tools are shown to its owner/);
      const anonymous = await terminals.run(`--url ${node.url} chat hello`, cwd);
      expect(anonymous.code).toBe(1);
      expect(anonymous.screen).toMatch(/401|authentication required/);

      // The console: the owner token signs in (a session cookie opens it), the README's token does not.
      const signIn = (token: string) =>
        fetch(`${node.url}/console/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }).toString(),
          redirect: 'manual',
        });
      const owner = await signIn(fs.readFileSync(tokenFile, 'utf8').trim());
      expect(owner.status).toBe(303);
      const cookie = owner.headers.get('set-cookie')!.split(';')[0]!;
      const shell = await fetch(`${node.url}/console`, { headers: { cookie } });
      expect(shell.status).toBe(200);
      expect(await shell.text()).toContain('/console/assets/console.js');
      expect((await signIn(HUB_TOKEN)).status).toBe(403);

      // Ctrl-C: a clean stop takes the token back.
      expect(await node.stop()).toBe(0);
      expect(fs.existsSync(tokenFile)).toBe(false);
    });
  },
);
