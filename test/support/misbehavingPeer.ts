import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';

/**
 * A raw HTTP server on 127.0.0.1 that plays an A2A peer badly on purpose:
 * its card route and its JSON-RPC endpoint each answer in a chosen way
 * (every class of status, a reset, a truncated, slow, huge, compressed or
 * endless body, garbage, a redirect, quirks of peers in the wild), and can
 * be switched while a node is running. Written without the SDK so it can
 * send what no SDK would.
 */

/** How the card route or the A2A endpoint answers. A number is that HTTP status with a short HTML page. */
export type Misbehaviour =
  | 'ok'
  | number
  | 'reset'
  | 'truncated'
  | 'slow'
  | 'huge'
  | 'huge-declared'
  | 'gzip-bomb'
  | 'garbage'
  | 'endless'
  | 'redirect-private'
  | 'control-chars'
  | 'foreign-id'
  | 'no-kind'
  | 'echo-auth'
  | 'heartbeats'
  | 'big-chunks'
  | 'ambiguous'
  | 'a2a-error';

/** What a running misbehaving peer offers the test. */
export interface MisbehavingPeer {
  readonly origin: string;
  readonly cardUrl: string;
  /** How every card route answers; `ok` lets `/cards/<mode>` paths answer their own way. */
  card: Misbehaviour;
  call: Misbehaviour;
  /** Requests received, `METHOD path` each (and the header, when Basic credentials came with it). */
  readonly seen: string[];
  /** The JSON-RPC bodies received on the A2A endpoint. */
  readonly bodies: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Options of {@link startMisbehavingPeer}. */
export interface MisbehavingPeerOptions {
  name: string;
  /** A unique routing word: the card's skill tag, so the offline model routes messages naming it here. */
  keyword?: string;
  streaming?: boolean;
  /** `0.3`: a v0.3 card and v0.3 JSON-RPC results (with `kind`, unless the behaviour drops it). */
  version?: '1.0' | '0.3';
  /** Where `redirect-private` points (a canary that must never be reached). */
  redirectTo?: string;
  /** The host written into the card's interface URL (default 127.0.0.1). */
  cardHost?: string;
  /** Adds a description to the card (default true). */
  describe?: boolean;
}

const HUGE = 5 * 1024 * 1024;
/** 5 MiB of JSON that gzip makes a few KiB: built once, on first use. */
let gzipBomb: Buffer | undefined;
const bomb = () =>
  (gzipBomb ??= gzipSync(Buffer.concat([Buffer.from('{"padding":"'), Buffer.alloc(HUGE, 'a'), Buffer.from('"}')])));

/**
 * Starts a misbehaving peer; both routes answer `ok` until told otherwise.
 * @example
 * const peer = await startMisbehavingPeer({ name: 'weird', keyword: 'zebrafacts' });
 * peer.card = 302;
 */
export async function startMisbehavingPeer(options: MisbehavingPeerOptions): Promise<MisbehavingPeer> {
  const state = { card: 'ok' as Misbehaviour, call: 'ok' as Misbehaviour };
  const seen: string[] = [];
  const bodies: Array<Record<string, unknown>> = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const every = (ms: number, fn: () => boolean) => {
    const timer = setInterval(() => {
      if (!fn()) {
        clearInterval(timer);
        timers.delete(timer);
      }
    }, ms);
    timers.add(timer);
  };
  const server = http.createServer((req, res) => {
    seen.push(
      `${req.method} ${req.url}${/^Basic /.test(req.headers.authorization ?? '') ? ` ${req.headers.authorization}` : ''}`,
    );
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET') return answerCard(res, req);
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        // a broken request is answered like any other
      }
      bodies.push(body);
      answerCall(res, req, body);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const interfaceUrl = `http://${options.cardHost ?? '127.0.0.1'}:${port}/`;

  function card(): Record<string, unknown> {
    const skills = [
      { id: 'main', name: options.name, description: 'test skill', tags: [options.keyword ?? options.name] },
    ];
    const description = options.describe === false ? {} : { description: `Misbehaving test peer ${options.name}.` };
    if (options.version === '0.3') {
      return {
        name: options.name,
        ...description,
        url: interfaceUrl,
        preferredTransport: 'JSONRPC',
        protocolVersion: '0.3.0',
        version: '1.0.0',
        capabilities: { streaming: options.streaming ?? false },
        defaultInputModes: ['text'],
        defaultOutputModes: ['text'],
        skills,
      };
    }
    return {
      name: options.name,
      ...description,
      version: '1.0.0',
      supportedInterfaces: [{ url: interfaceUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: options.streaming ?? false },
      defaultInputModes: ['text'],
      defaultOutputModes: ['text'],
      skills,
    };
  }

  /** The common misbehaviours; true when handled. */
  function misbehave(res: http.ServerResponse, req: http.IncomingMessage, mode: Misbehaviour): boolean {
    if (typeof mode === 'number') {
      const headers: Record<string, string> = { 'content-type': 'text/html' };
      if (mode >= 300 && mode < 400) headers.location = options.redirectTo ?? 'http://127.0.0.1:1/elsewhere';
      res.writeHead(mode, headers).end(`<html><body>status ${mode}</body></html>`);
      return true;
    }
    switch (mode) {
      case 'reset':
        req.socket.destroy();
        return true;
      case 'truncated':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4000' });
        // Cut once the start is on its way: the caller gets those bytes, then the connection ends.
        res.write('{"jsonrpc":"2.0","result":{"name":"cut', () => req.socket.destroy());
        return true;
      case 'slow':
        return true; // never answers; the caller's deadline must end it
      case 'huge':
        // A first megabyte at once (past every cap whatever the machine's load), then more without end.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(`{"padding":"${'x'.repeat(1024 * 1024)}`);
        every(1, () => {
          if (res.destroyed) return false;
          res.write('x'.repeat(64 * 1024));
          return true;
        });
        return true;
      case 'huge-declared':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(HUGE * 20) });
        res.write('{');
        return true;
      case 'gzip-bomb':
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(bomb());
        return true;
      case 'garbage':
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"jsonrpc":"2.0","id":1,"result":<<<garbage>>>');
        return true;
      case 'redirect-private':
        res.writeHead(307, { location: options.redirectTo ?? 'http://127.0.0.1:1/' }).end();
        return true;
      default:
        return false;
    }
  }

  /** `/cards/<mode>` answers that way whatever `card` says: one server plays every start-up fault. */
  function cardMode(req: http.IncomingMessage): Misbehaviour {
    const match = /^\/cards\/([\w-]+)/.exec(req.url ?? '');
    if (!match || state.card !== 'ok') return state.card;
    return /^\d+$/.test(match[1]) ? Number(match[1]) : (match[1] as Misbehaviour);
  }

  function answerCard(res: http.ServerResponse, req: http.IncomingMessage): void {
    const mode = cardMode(req);
    if (misbehave(res, req, mode)) return;
    if (mode === 'endless') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"name":"');
      every(5, () => {
        if (res.destroyed) return false;
        res.write('zzzzzzzz');
        return true;
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card()));
  }

  function answerCall(res: http.ServerResponse, req: http.IncomingMessage, body: Record<string, unknown>): void {
    const mode = state.call;
    if (misbehave(res, req, mode)) return;
    const id = body.id ?? 1;
    const method = String(body.method ?? '');
    const params = (body.params ?? {}) as { message?: { parts?: Array<{ text?: string }>; contextId?: string } };
    const asked = (params.message?.parts ?? []).map((p) => p.text ?? '').join(' ');
    const legacy = options.version === '0.3';
    let reply = `pong: ${asked.split('Request:').pop()?.trim()}`;
    if (mode === 'echo-auth') reply = `your credentials were ${String(req.headers.authorization)}`;
    const contextId = params.message?.contextId || 'ctx-1';
    // `foreign-id`: answers carry `id: null`, stream events a constant of the server's own.
    const answerId = mode === 'foreign-id' ? (/stream/i.test(method) ? 'event' : null) : id;
    const rpc = (result: unknown) => JSON.stringify({ jsonrpc: '2.0', id: answerId, result });
    const completed = (text: string) =>
      legacy
        ? {
            kind: 'task',
            id: 'task-1',
            contextId,
            status: { state: 'completed' },
            artifacts: [{ artifactId: 'a1', parts: [{ kind: 'text', text }] }],
          }
        : {
            task: {
              id: 'task-1',
              contextId,
              status: { state: 'TASK_STATE_COMPLETED' },
              artifacts: [{ artifactId: 'a1', parts: [{ text }] }],
            },
          };
    const streaming = /stream/i.test(method);
    if (mode === 'a2a-error') {
      const error = { code: -32001, message: 'Task not found: nope' };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, error }));
      return;
    }
    if (mode === 'ambiguous') {
      // A task and a status update at once: no kind can be inferred.
      const result = { id: 'task-1', taskId: 'task-1', contextId, status: { state: 'completed' } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(rpc(result));
      return;
    }
    if (!streaming) {
      if (mode === 'no-kind') {
        const task = completed(reply) as Record<string, unknown>;
        delete task.kind;
        (task.artifacts as Array<{ parts: Array<Record<string, unknown>> }>)[0].parts[0] = { text: reply };
        res.writeHead(200, { 'content-type': 'application/json' }).end(rpc(task));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(rpc(completed(reply)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const working = legacy
      ? { kind: 'status-update', taskId: 'task-1', contextId, status: { state: 'working' }, final: false }
      : { statusUpdate: { taskId: 'task-1', contextId, status: { state: 'TASK_STATE_WORKING' } } };
    const send = (result: unknown, prefix = '') => res.write(`data: ${prefix}${rpc(result)}\n\n`);
    switch (mode) {
      case 'endless':
      case 'heartbeats':
        every(mode === 'endless' ? 1 : 200, () => {
          if (res.destroyed) return false;
          send(working);
          return true;
        });
        return;
      case 'big-chunks': {
        let n = 0;
        every(1, () => {
          if (res.destroyed) return false;
          const chunk = 'y'.repeat(16 * 1024);
          send(
            legacy
              ? {
                  kind: 'artifact-update',
                  taskId: 'task-1',
                  contextId,
                  artifact: { artifactId: 'a1', parts: [{ kind: 'text', text: chunk }] },
                  append: n > 0,
                }
              : {
                  artifactUpdate: {
                    taskId: 'task-1',
                    contextId,
                    artifact: { artifactId: 'a1', parts: [{ text: chunk }] },
                    append: n > 0,
                  },
                },
          );
          n++;
          return true;
        });
        return;
      }
      case 'control-chars':
        send(working, '\u0000\u001e');
        send(completed(reply), '\ufeff\u0001');
        res.end();
        return;
      case 'no-kind': {
        const { kind: _k, ...update } = working as Record<string, unknown>;
        send(update);
        const task = completed(reply) as Record<string, unknown>;
        delete task.kind;
        send(task);
        res.end();
        return;
      }
      default:
        send(working);
        send(completed(reply));
        res.end();
    }
  }

  return {
    origin,
    cardUrl: `${origin}/.well-known/agent-card.json`,
    get card() {
      return state.card;
    },
    set card(mode: Misbehaviour) {
      state.card = mode;
    },
    get call() {
      return state.call;
    },
    set call(mode: Misbehaviour) {
      state.call = mode;
    },
    seen,
    bodies,
    close: async () => {
      for (const timer of timers) clearInterval(timer);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
