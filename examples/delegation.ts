/**
 * A whole node in-process: the orchestrator delegates a shell request to the
 * operator, and the events show who acted. `npm run examples` runs it.
 */
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { createApp, OWNER, resolveConfig, runToEnd, silentLogger, type RunEvent } from 'lango';

export async function main(dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-example-'))): Promise<string[]> {
  const app = await createApp(resolveConfig({ dataDir, tools: { browser: { enabled: false } } }), {
    logger: silentLogger,
  });
  try {
    const lines: string[] = [];
    const onEvent = (event: RunEvent) => {
      if (event.type === 'transfer') lines.push(`${event.from} → ${event.to}`);
      if (event.type === 'tool_end') lines.push(`${event.tool}: ${event.ok ? 'ok' : 'failed'}`);
    };
    const result = await runToEnd(
      app.runner,
      { principal: OWNER, sessionId: 'example', text: 'exec_shell {"command": "echo delegated"}' },
      onEvent,
    );
    lines.push(`${result.author}: ${result.text.split('\n').slice(-1)[0]}`);
    return lines;
  } finally {
    await app.close();
  }
}

if (require.main === module) void main().then((lines) => process.stdout.write(lines.join('\n') + '\n'));
