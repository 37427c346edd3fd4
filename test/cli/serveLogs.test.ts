import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { routeConsoleToLogger } from '../../src/cli/consoleToLog';
import { createMemoryLogger } from '../../src/log/logger';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { freePort, spawnServe, type ServeProcess } from '../support/reliabilityProcess';

describe('what libraries print while the node serves', () => {
  it('becomes one log record with the message and the A2A reason, no stack', () => {
    const logger = createMemoryLogger();
    const restore = routeConsoleToLogger(logger);
    try {
      console.error('Pre-stream error for request 1:', new TaskNotFoundError('Task not found: nope'));
    } finally {
      restore();
    }
    expect(logger.records).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: 'Pre-stream error for request 1',
        meta: expect.objectContaining({ error: 'Task not found: nope', reason: 'TASK_NOT_FOUND' }),
      }),
    ]);
    expect(JSON.stringify(logger.records)).not.toMatch(/\n\s+at /);
  });

  describe('lango serve', () => {
    let dir: string;
    let serve: ServeProcess;
    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-serve-logs-'));
      const configFile = path.join(dir, 'lango.config.yaml');
      fs.writeFileSync(configFile, 'tools:\n  browser:\n    enabled: false\n');
      serve = await spawnServe({ cwd: dir, configFile, port: await freePort() });
    }, 60_000);
    afterAll(async () => {
      await serve?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('prints nothing for a peer’s refused requests but JSON lines, never a stack trace', async () => {
      const rpc = (method: string, version: string) =>
        fetch(serve.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'A2A-Version': version },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { id: 'no-such-task' } }),
        }).then((res) => res.text());
      expect(await rpc('GetTask', '9.9')).toContain('VERSION_NOT_SUPPORTED');
      // JSON-RPC, v1.0 and v0.3 alike, is answered by the node's own binding: a caller's error is the caller's,
      // answered and not logged (the SDK's express handler, which printed a refused v0.3 stream, is gone).
      expect(await rpc('SubscribeToTask', '1.0')).toContain('TASK_NOT_FOUND');
      expect(await rpc('tasks/resubscribe', '0.3')).toContain('-32001');
      const rest = await fetch(`${serve.url}/tasks/no-such-task:subscribe`, { headers: { 'A2A-Version': '1.0' } });
      expect(rest.status).toBe(404);
      await rest.text();
      // Everything it printed has arrived once the process has ended and its pipes have closed.
      const closed = new Promise((resolve) => serve.child.once('close', resolve));
      await serve.stop();
      await closed;
      const lines = serve.output().trim().split('\n');
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
      expect(serve.output()).not.toMatch(/\n\s+at /);
      expect(serve.output()).not.toContain('Task not found');
      expect(serve.output()).not.toContain('VERSION_NOT_SUPPORTED');
    });
  });
});
