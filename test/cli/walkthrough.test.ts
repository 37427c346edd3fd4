import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { cliWorkdir } from '../support/cliProcess';
import { Terminals } from '../support/cliTerminal';
import { tmuxUnavailable } from '../support/tmux';

jest.setTimeout(600_000);

const noTmux = tmuxUnavailable();
if (noTmux) process.stderr.write(`skipping the terminal tests: ${noTmux}\n`);

/** A port free now, for the peer: the README gives it a fixed one (4101) that the hub's config names. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The hub's lango.config.yaml of the README's walkthrough, naming the peer's port. */
const hubConfig = (port: number) =>
  [
    'a2a:',
    '  agentName: hub',
    '  remoteAgents:',
    '    - name: weather',
    `      baseUrl: http://127.0.0.1:${port}        # its card is read from /.well-known/agent-card.json`,
    '      description: Forecasts and picnic plans',
    '',
  ].join('\n');

/**
 * Issue 34, item 7: the README's federation walkthrough works as written,
 * stopped and restarted in any order. The peer is started with the
 * README's command in the hub's folder, whose lango.config.yaml is the
 * hub's: the peer must not take it (it would become a second hub pointing
 * at itself, "delegation loop").
 */
(noTmux ? describe.skip : describe)(
  `the README's federation walkthrough, in real terminals (tmux)${noTmux ? ` (skipped: ${noTmux})` : ''}`,
  () => {
    const terminals = new Terminals();
    let hubDir: string;
    let peerDir: string;
    let peerPort: number;
    beforeAll(async () => {
      peerPort = await freePort();
      hubDir = cliWorkdir(hubConfig(peerPort));
      peerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-weather-'));
    });
    afterAll(() => {
      terminals.closeAll();
      fs.rmSync(hubDir, { recursive: true, force: true });
      fs.rmSync(peerDir, { recursive: true, force: true });
    });

    /** `PORT=<port> lango --data-dir <peer> serve`, in the hub's folder as the README runs it. */
    const startPeer = async () => {
      const peer = await terminals.serve(hubDir, { PORT: String(peerPort) }, `--data-dir ${peerDir}`);
      // Its own node: defaults, and it says why the hub's file is not its configuration.
      const banner = await peer.terminal.waitForScreen(/Ctrl-C stops it\./);
      expect(banner).toContain('config   none (defaults); data ');
      expect(banner).toMatch(/\.\/lango\.config\.yaml is not read: it is the configuration of the node of \.\/\.lango/);
      return peer;
    };
    const startHub = async () => {
      const hub = await terminals.serve(hubDir);
      await hub.terminal.waitForScreen(/config {3}\.\/lango\.config\.yaml; data \.\/\.lango/);
      return hub;
    };

    /** The walkthrough's two checks from the hub's folder: the peer healthy, and a message reaching it. */
    async function federationWorks(when: string): Promise<void> {
      const check = await terminals.run('agents --check', hubDir);
      expect({ when, code: check.code }).toEqual({ when, code: 0 });
      expect(check.screen).toMatch(
        new RegExp(
          `^ {2}weather {10}healthy {3}http://127\\.0\\.0\\.1:${peerPort}/\\.well-known/agent-card\\.json`,
          'm',
        ),
      );
      const chat = await terminals.run("chat 'weather: plan a picnic'", hubDir);
      expect({ when, code: chat.code, loop: /delegation loop/.test(chat.screen) }).toEqual({
        when,
        code: 0,
        loop: false,
      });
      expect(chat.screen).toContain('→ lango-orchestrator hands over to weather');
      expect(chat.screen).toContain('⇄ weather: completed');
      expect(chat.screen).toMatch(/^weather: /m);
      // The peer is a plain node: its own tree, no remote agent, no "hub" name.
      const peerAgents = await terminals.run(`--data-dir ${peerDir} agents --check`, hubDir);
      expect({ when, code: peerAgents.code }).toEqual({ when, code: 0 });
      expect(peerAgents.screen).toContain('remote agents: none configured');
    }

    it('works as written, and after every restart: the peer, the hub, both in either order', async () => {
      let peer = await startPeer();
      let hub = await startHub();
      await federationWorks('first start');

      expect(await peer.stop()).toBe(0);
      const down = await terminals.run('agents --check', hubDir);
      expect(down.code).toBe(1);
      expect(down.screen).toMatch(/^ {2}weather {10}down /m);
      peer = await startPeer();
      await federationWorks('the peer restarted');

      expect(await hub.stop()).toBe(0);
      hub = await startHub();
      await federationWorks('the hub restarted');

      expect(await hub.stop()).toBe(0);
      expect(await peer.stop()).toBe(0);
      hub = await startHub();
      peer = await startPeer();
      await federationWorks('both stopped, the hub started first');

      expect(await peer.stop()).toBe(0);
      expect(await hub.stop()).toBe(0);
      peer = await startPeer();
      hub = await startHub();
      await federationWorks('both stopped, the peer started first');

      expect(await hub.stop()).toBe(0);
      expect(await peer.stop()).toBe(0);
    });
  },
);
