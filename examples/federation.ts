/**
 * Two nodes on loopback: the hub loads the peer from its card and delegates
 * to it over A2A. `npm run examples` runs it.
 */
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { createApp, OWNER, resolveConfig, runToEnd, silentLogger, walkAgents } from 'lango';

export async function main(): Promise<string[]> {
  const dir = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `lango-example-${name}-`));
  const node = (name: string, a2a: Record<string, unknown> = {}) =>
    createApp(
      resolveConfig({
        server: { port: 0 },
        dataDir: dir(name),
        tools: { browser: { enabled: false } },
        a2a: { agentName: name, ...a2a },
      }),
      { logger: silentLogger },
    );
  const peer = await node('weather');
  try {
    const peerUrl = await peer.listen();
    const hub = await node('hub', { remoteAgents: [{ name: 'weather', baseUrl: peerUrl }] });
    try {
      const tree = walkAgents(hub.root()).map((a) => `${a.name}${a.kind === 'remote' ? ' (remote)' : ''}`);
      const result = await runToEnd(hub.runner, {
        principal: OWNER,
        sessionId: 'example',
        text: 'weather: plan a picnic',
      });
      return [`hub tree: ${tree.join(', ')}`, `${result.author}: ${result.text.slice(0, 80)}`];
    } finally {
      await hub.close();
    }
  } finally {
    await peer.close();
  }
}

if (require.main === module) void main().then((lines) => process.stdout.write(lines.join('\n') + '\n'));
