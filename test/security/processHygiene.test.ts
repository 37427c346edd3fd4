import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BUILT_CLI, freePort, spawnServe, type ServeProcess } from '../support/reliabilityProcess';
import { waitFor } from '../support/waitFor';

/**
 * Nothing a caller sends ends the process, and the process ends when it must:
 * a real `lango serve` (the built CLI) takes malformed, aborted, half-closed
 * and oversized requests, deep JSON and 300 subscribers of one task, and
 * still serves, with no unhandled error or listener-leak warning on stderr;
 * a failed listen closes everything and exits 1 with one line; SIGTERM is
 * honoured at any time.
 */

const CONFIG = 'logLevel: warn\ntools:\n  browser:\n    enabled: false\n';

/**
 * Writes `bytes` on a raw connection (then ends its write side, unless `end` is false: a client with nothing
 * more to send) and resolves with what came back once the server closed it. A server that neither answers nor
 * closes fails the test after a generous 20 s.
 */
function raw(port: number, bytes: string | Buffer, options: { end?: boolean } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server neither answered nor closed in 20 s: ${JSON.stringify(answer.slice(0, 200))}`));
    }, 20_000);
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.write(bytes, () => {
      if (options.end !== false) socket.end();
    });
  });
}

/** Writes the start of a request and drops the connection once the bytes are written. */
function abortAfterWriting(port: number, bytes: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => resolve());
    socket.on('close', () => resolve());
    socket.write(bytes, () => socket.destroy());
  });
}

const post = (target: string, body: string, extra = '') =>
  `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n` +
  `Content-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

const rpc = (method: string, params: unknown, id: number | string = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

const message = (text: string) => ({
  message: { messageId: `m-${Math.random().toString(36).slice(2)}`, role: 'ROLE_USER', parts: [{ text }] },
});

/** Opens an SSE stream (JSON-RPC at `/`, or a REST `target`); resolves with the first event's data and the socket (still open). */
function openStream(port: number, body: string, target = '/'): Promise<{ first: string; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    const timer = setTimeout(() => reject(new Error(`no SSE event: ${answer.slice(0, 500)}`)), 15_000);
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('utf8');
      const event = /\ndata: (.*)\n/.exec(answer);
      if (event) {
        clearTimeout(timer);
        socket.removeAllListeners('data');
        socket.on('data', () => {});
        resolve({ first: event[1], socket });
      }
    });
    socket.write(post(target, body));
  });
}

/** The task id the first event of a stream names (JSON-RPC's `result` or REST's bare StreamResponse). */
function taskIdOf(first: string): string {
  const event = JSON.parse(first) as { result?: StreamEvent } & StreamEvent;
  const response = event.result ?? event;
  const id = response.task?.id ?? response.statusUpdate?.taskId;
  if (!id) throw new Error(`no task in the first event: ${first}`);
  return id;
}
type StreamEvent = { task?: { id: string }; statusUpdate?: { taskId: string } };

describe('a real node under hostile input', () => {
  let dir: string;
  let node: ServeProcess;
  let port: number;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-hygiene-'));
    fs.writeFileSync(path.join(dir, 'lango.config.yaml'), CONFIG);
    port = await freePort();
    node = await spawnServe({
      cwd: dir,
      configFile: path.join(dir, 'lango.config.yaml'),
      port,
      env: { LOG_LEVEL: 'warn' },
    });
  }, 60_000);
  afterAll(async () => {
    await node?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The node is alive, answers health and a real turn, and printed nothing that betrays an unhandled fault. */
  async function expectStillServing(): Promise<void> {
    expect(node.child.exitCode).toBeNull();
    expect((await fetch(`${node.url}/healthz`)).status).toBe(200);
    const answer = await fetch(`${node.url}/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body: rpc('SendMessage', message('hello')),
    });
    expect(((await answer.json()) as { result?: unknown }).result).toBeDefined();
    const output = node.output();
    expect(output).not.toMatch(/Unhandled|Uncaught|MaxListenersExceeded|memory leak detected|\n\s+at .+:\d+:\d+/);
  }

  it('survives malformed requests, each answered or dropped', async () => {
    const answers = await Promise.all([
      raw(port, Buffer.from([0, 1, 2, 255, 254, 13, 10, 13, 10])),
      raw(port, 'GET\r\n\r\n'),
      raw(port, 'BREW / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'),
      raw(port, `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      raw(port, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\n\r\n'),
      raw(port, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Nul: a\u0000b\r\n\r\n'),
      raw(port, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
      raw(port, `${post('/', '{}', 'Transfer-Encoding: chunked\r\n')}`),
      raw(port, 'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nboom\r\n0\r\n\r\n'),
      raw(port, 'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n'),
      raw(port, 'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n'),
      // The body is never sent: the server refuses it by its declared size, and closes.
      raw(
        port,
        'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000000000\r\n\r\n{',
        { end: false },
      ),
      raw(port, post('/', '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{')),
      raw(port, post('/', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString('latin1'))),
      raw(port, post('/', '{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}')),
      raw(port, post('/message:send', '[1,2,3]')),
      raw(port, post('/tasks/%E0%A4%A:cancel', '{}')),
      raw(port, 'GET /tasks/%00%ZZ HTTP/1.1\r\nHost: 127.0.0.1\r\nA2A-Version: 1.0\r\n\r\n'),
      raw(port, `GET /${'x'.repeat(70_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`),
      // Two requests in one write, the second broken.
      raw(port, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/1.1\r\nHo st\r\n\r\n`),
    ]);
    for (const answer of answers) {
      // Every answer is a status line or nothing (dropped), never a stack trace.
      if (answer) expect(answer).toMatch(/^HTTP\/1\.1 \d{3} /);
      expect(answer).not.toMatch(/\n\s+at .+:\d+:\d+/);
    }
    await expectStillServing();
  });

  it('survives clients that abort or half-close mid-request', async () => {
    const partial = (target: string) =>
      `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: 5000\r\n\r\n{"jsonrpc":"2.0",`;
    await Promise.all([
      abortAfterWriting(port, partial('/')),
      abortAfterWriting(port, partial('/message:send')),
      abortAfterWriting(port, partial('/message:stream')),
      abortAfterWriting(port, 'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n'),
      abortAfterWriting(
        port,
        'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n',
      ),
      abortAfterWriting(port, post('/', rpc('SendMessage', message('hello')))),
      abortAfterWriting(port, post('/message:send', JSON.stringify(message('hello')))),
      // Half-closed: the whole request (or half of one), then the write side ends before the answer.
      raw(port, post('/', rpc('SendMessage', message('hello')))),
      raw(port, partial('/')),
    ]);
    await expectStillServing();
  });

  it('survives clients that drop their event streams while a command runs', async () => {
    const command = message('exec_shell {"command":"sleep 1; echo done"}');
    const streams = await Promise.all([
      ...Array.from({ length: 5 }, () => openStream(port, rpc('SendStreamingMessage', command))),
      // REST stream too.
      openStream(port, JSON.stringify(command), '/message:stream'),
    ]);
    for (const { socket } of streams) socket.destroy();
    // Each turn ends with nobody listening: its last events go to dropped streams.
    for (const id of streams.map(({ first }) => taskIdOf(first))) {
      await waitFor(
        async () => {
          const answer = await fetch(`${node.url}/`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
            body: rpc('GetTask', { id }),
          });
          const state = ((await answer.json()) as { result?: { status?: { state?: string } } }).result?.status?.state;
          return state === 'TASK_STATE_COMPLETED';
        },
        30_000,
        `task ${id} to complete`,
      );
    }
    await expectStillServing();
  });

  it('refuses JSON nested thousands of levels with -32602 / HTTP 400, not an internal error', async () => {
    const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
    const cases = [
      `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"d1","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":${deep(5000)}}}}`,
      `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"d2","role":"ROLE_USER","parts":[{"data":${deep(3000)}}]}}}`,
      `{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":${'['.repeat(5000)}${']'.repeat(5000)}}}`,
    ];
    for (const body of cases) {
      const answer = await fetch(`${node.url}/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
        body,
      });
      // Past the parsers' guard (1,000 levels), before the SDK's readers recurse into it.
      expect(await answer.json()).toEqual({
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32602, message: 'Invalid params: params nests deeper than 1000 levels' },
      });
    }
    const rest = await fetch(`${node.url}/message:send`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body: `{"message":{"messageId":"d3","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":${deep(5000)}}}`,
    });
    expect(rest.status).toBe(400);
    expect(await rest.text()).toContain('the request body nests deeper than 1000 levels');
    // Reasonable nesting still goes through.
    const fine = await fetch(`${node.url}/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body: `{"jsonrpc":"2.0","id":8,"method":"SendMessage","params":{"message":{"messageId":"d4","role":"ROLE_USER","parts":[{"text":"hello"}],"metadata":${deep(90)}}}}`,
    });
    expect(((await fine.json()) as { result?: unknown }).result).toBeDefined();
    await expectStillServing();
  });

  it('takes 300 subscribers of one task without a listener-leak warning', async () => {
    const { first, socket } = await openStream(
      port,
      // Long enough to outlast 300 connections on a loaded machine (4 s did not, once); cancelled below.
      rpc('SendStreamingMessage', message('exec_shell {"command":"sleep 60; echo done"}')),
    );
    const event = JSON.parse(first) as { result: { task?: { id: string }; statusUpdate?: { taskId: string } } };
    const taskId = event.result.task?.id ?? event.result.statusUpdate?.taskId;
    expect(taskId).toBeDefined();
    const subscribers = await Promise.all(
      Array.from({ length: 300 }, (_, i) => openStream(port, rpc('SubscribeToTask', { id: taskId }, i))),
    );
    expect(subscribers).toHaveLength(300);
    for (const subscriber of subscribers) subscriber.socket.destroy();
    socket.destroy();
    const cancel = await fetch(`${node.url}/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body: rpc('CancelTask', { id: taskId }),
    });
    expect(((await cancel.json()) as { result?: { status: { state: string } } }).result?.status.state).toBe(
      'TASK_STATE_CANCELED',
    );
    await expectStillServing();
  }, 60_000);
});

/** Preloaded into `lango serve` to tell whether its event loop emptied by itself (see the file). */
const DRAIN_WITNESS = path.resolve(__dirname, '../support/drainWitness.mjs');

/**
 * Runs the built CLI to its end; resolves with its exit code, stderr and whether it drained: ended because
 * nothing was left holding it, not by the CLI's exit timer for a leaked handle (or the 30 s SIGKILL here).
 */
function runServe(cwd: string, env: NodeJS.ProcessEnv = {}) {
  const drainFile = path.join(cwd, 'drained.txt');
  return new Promise<{ code: number | null; signal: string | null; stderr: string; drained: boolean }>((resolve) => {
    const child = spawn(process.execPath, ['--import', DRAIN_WITNESS, BUILT_CLI, 'serve'], {
      cwd,
      env: { PATH: process.env.PATH, LOG_LEVEL: 'error', LANGO_TEST_DRAIN_FILE: drainFile, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stderr, drained: fs.existsSync(drainFile) });
    });
  });
}

describe('a failed listen', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-listen-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('closes everything and exits 1 with one line when the port is taken', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as net.AddressInfo;
    try {
      fs.writeFileSync(path.join(dir, 'lango.config.yaml'), `${CONFIG}server:\n  port: ${port}\n`);
      const run = await runServe(dir);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `lango: cannot listen on 127.0.0.1:${port}: the port is already in use by another process ` +
          '(change server.port or PORT)\n',
      );
      // It ended on its own: nothing (database, workers, timers, peers) was left holding it.
      expect(run.drained).toBe(true);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  }, 60_000);

  it('exits 1 with one line when the host name does not resolve', async () => {
    fs.writeFileSync(
      path.join(dir, 'lango.config.yaml'),
      `${CONFIG}server:\n  host: no-such-host.invalid\n  port: 0\na2a:\n  auth: { bearerTokens: [hygiene-token-1] }\n`,
    );
    const run = await runServe(dir);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^lango: cannot listen on no-such-host\.invalid:0: the host name (does not resolve|could not be resolved now) \(server\.host\)\n$/,
    );
  }, 60_000);
});

describe('SIGTERM', () => {
  /** `lango serve` in a fresh folder, its stderr (the log, at info) gathered, and its exit. */
  function startingServe(extraConfig = '', env: NodeJS.ProcessEnv = {}) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-term-'));
    fs.writeFileSync(path.join(dir, 'lango.config.yaml'), `${CONFIG}server:\n  port: 0\n${extraConfig}`);
    const child = spawn(process.execPath, [BUILT_CLI, 'serve'], {
      cwd: dir,
      env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    void exited.then(() => clearTimeout(killer));
    return {
      child,
      exited,
      stderr: () => stderr,
      /** The first log record whose message is `message`, parsed. */
      record: (message: string): Record<string, unknown> | undefined => {
        const line = stderr.split('\n').find((l) => l.includes(`"message":"${message}"`));
        return line ? (JSON.parse(line) as Record<string, unknown>) : undefined;
      },
      /** Log lines that are not at level info: warnings, errors, anything else printed. */
      problems: () =>
        stderr
          .split('\n')
          .filter(Boolean)
          .filter((line) => !line.includes('"level":"info"')),
      remove: () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }

  it.each([
    ['as soon as the process exists', 'spawn'],
    ['once it has opened its vault, mid-start', 'vault opened'],
  ])(
    'is honoured while the node is still starting (%s)',
    async (_when, moment) => {
      const serve = startingServe();
      try {
        if (moment === 'spawn') await new Promise((resolve) => serve.child.once('spawn', resolve));
        else await waitFor(() => serve.record(moment), 30_000, `"${moment}" logged`);
        expect(serve.record('lango node listening')).toBeUndefined();
        serve.child.kill('SIGTERM');
        // Before the CLI is up the default action ends it; once up, it closes the node and exits 0.
        expect([
          { code: 0, signal: null },
          { code: null, signal: 'SIGTERM' },
        ]).toContainEqual(await serve.exited);
        expect(serve.problems()).toEqual([]);
      } finally {
        serve.remove();
      }
    },
    60_000,
  );

  it('ends the process at once the second time, whatever the shutdown is doing', async () => {
    // A trace collector that takes the node's export and never answers: the shutdown's flush waits on it
    // (for up to ten minutes, by the exporter's and batch processor's timeouts), so only the second signal can
    // end the process, with 143.
    const held: http.ServerResponse[] = [];
    const collector = http.createServer((req, res) => {
      req.resume();
      held.push(res);
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const tracesEndpoint = `http://127.0.0.1:${(collector.address() as net.AddressInfo).port}/v1/traces`;
    const serve = startingServe(`observability:\n  otlp:\n    tracesEndpoint: ${tracesEndpoint}\n`, {
      OTEL_EXPORTER_OTLP_TIMEOUT: '600000',
      OTEL_BSP_EXPORT_TIMEOUT: '600000',
    });
    try {
      const listening = await waitFor(
        () => serve.record('lango node listening')?.url as string | undefined,
        60_000,
        'the node listening',
      );
      // A request makes spans to export.
      const answer = await fetch(`${listening}/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
        body: rpc('SendMessage', message('hello')),
      });
      expect(((await answer.json()) as { result?: unknown }).result).toBeDefined();
      serve.child.kill('SIGTERM');
      await waitFor(
        () => serve.stderr().includes('"message":"stopping"') && held.length > 0,
        30_000,
        'the shutdown under way, its trace export held',
      );
      serve.child.kill('SIGTERM');
      // 143: the second signal's handler ended it (a finished shutdown would exit 0).
      expect(await serve.exited).toEqual({ code: 143, signal: null });
    } finally {
      serve.child.kill('SIGKILL');
      for (const res of held) res.destroy();
      await new Promise((resolve) => collector.close(resolve));
      serve.remove();
    }
  }, 90_000);
});
