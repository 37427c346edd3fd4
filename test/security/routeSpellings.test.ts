import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createApp, type LangoApp, type RouteSpec } from '../../src';
import { resolveConfig } from '../../src/config/load';
import { createMemoryLogger } from '../../src/log/logger';

/**
 * Issue 37 §1: every row of the node's one route table, walked in every
 * spelling of its path, without credentials, as a named caller and as the
 * owner. The canonical spelling answers as the row's access says; every other
 * spelling (case, a trailing or doubled slash, a `.` or `..` segment, a
 * percent-encoded letter) is 404 before any handler runs; and no answer to
 * anyone but the owner carries the owner's data.
 */

const OWNER_TOKEN = 'route-walk-owner-token-0123';
const GUEST_TOKEN = 'route-walk-guest-token-4567';
const METRICS_TOKEN = 'route-walk-metrics-token-89';
/** Words only the owner's own task and timeline hold. */
const OWNER_MARK = 'owner-only-marker-5f3a';

describe('every route of the table, in every spelling, as nobody, a caller and the owner', () => {
  let app: LangoApp;
  let url: string;
  let dir: string;
  let ownerTask: string;

  /** The rows served over HTTP/1.1 (the gRPC binding's methods are walked by its own tests). */
  const httpRows = () => app.routes.filter((row) => row.binding !== 'grpc');

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-routes-'));
    const config = resolveConfig({
      server: { host: '127.0.0.1', port: 0 },
      dataDir: dir,
      tools: { browser: { enabled: false } },
      observability: { metricsToken: METRICS_TOKEN },
      a2a: {
        auth: {
          callers: [
            { name: 'admin', owner: true, bearerTokens: [OWNER_TOKEN] },
            { name: 'guest', bearerTokens: [GUEST_TOKEN], grant: { specialists: ['planner'] } },
          ],
        },
      },
    });
    app = await createApp(config, { logger: createMemoryLogger() });
    url = await app.listen();
    const sent = await rpc('SendMessage', { message: message(`hello ${OWNER_MARK}`) }, OWNER_TOKEN);
    ownerTask = (sent.result as { task: { id: string } }).task.id;
  });
  afterAll(async () => {
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const message = (text: string) => ({ messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] });
  async function rpc(method: string, params: unknown, token?: string): Promise<Record<string, unknown>> {
    const answer = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...auth(token) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return (await answer.json()) as Record<string, unknown>;
  }
  const auth = (token?: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

  /** A concrete path of a row: each `{param}` filled with a value that names something of the owner's. */
  function concrete(row: RouteSpec): string {
    const values: Record<string, string> = {
      id: ownerTask,
      taskId: ownerTask,
      configId: 'cfg-1',
      tenant: 'acme',
      name: 'operator',
      file: 'console.js',
    };
    return row.path.replace(/\{\*?(\w+)\}/g, (_m, name: string) => values[name] ?? 'x');
  }

  /**
   * The other spellings of `row`'s concrete path: a trailing, leading or doubled slash, a `.` or `..` segment, the
   * case of a literal segment's letter flipped, that letter percent-encoded. None of them may reach a row.
   */
  function spellings(row: RouteSpec): string[] {
    const canonical = concrete(row);
    if (canonical === '/') return ['//', '/.', '/./', '/%2F', '/x/..', '/%2E'];
    const segments = canonical.slice(1).split('/');
    const literal = row.path
      .slice(1)
      .split('/')
      .findIndex((segment) => /[a-z]/i.test(segment.replace(/\{[^}]*\}/g, '')));
    const respelled = (change: (segment: string, letter: number) => string) =>
      '/' +
      segments.map((segment, i) => (i === literal ? change(segment, segment.search(/[a-z]/i)) : segment)).join('/');
    return [
      `${canonical}/`,
      `/${canonical}`,
      canonical.replace(/\/(?=[^/]*$)/, '//'),
      `/.${canonical}`,
      `/x/..${canonical}`,
      ...(literal < 0
        ? []
        : [
            respelled((s, i) => s.slice(0, i) + flipCase(s[i]!) + s.slice(i + 1)),
            respelled((s, i) => `${s.slice(0, i)}%${s.charCodeAt(i).toString(16).toUpperCase()}${s.slice(i + 1)}`),
          ]),
    ].filter((spelled) => spelled !== canonical);
  }

  /** One request with the path exactly as given (fetch would resolve its dot segments first). */
  function call(method: string, target: string, token?: string): Promise<{ status: number; text: string }> {
    const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? '{}' : undefined;
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          hostname,
          port,
          method,
          path: target,
          headers: {
            'A2A-Version': '1.0',
            ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
            ...auth(token),
            // A console change must come from its own origin: the same host, so the row itself answers.
            origin: url,
          },
        },
        (response) => {
          let text = '';
          const stream = (response.headers['content-type'] ?? '').startsWith('text/event-stream');
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            text += chunk;
            // An event stream is left once its first event came (or a bounded amount of anything).
            if (text.length > 256 * 1024 || (stream && text.includes('\n\n'))) response.destroy();
          });
          const done = () => resolve({ status: response.statusCode ?? 0, text });
          response.on('end', done);
          response.on('close', done);
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  }

  it('holds routes of every kind of access, and names each once', () => {
    const accesses = new Set(app.routes.map((row) => row.access));
    expect([...accesses].sort()).toEqual(['caller', 'metrics', 'owner', 'public']);
    const keys = app.routes.map((row) => `${row.methods.join(',')} ${row.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    const grpc = app.routes.filter((row) => row.binding === 'grpc');
    expect(grpc.map((row) => row.name)).toEqual(
      expect.arrayContaining(['SendMessage', 'SendStreamingMessage', 'GetTask']),
    );
    expect(grpc.every((row) => row.access === 'caller' && row.path.startsWith('/lf.a2a.v1.A2AService/'))).toBe(true);
  });

  it('answers each row as its access says, and never carries the owner data to another', async () => {
    const problems: string[] = [];
    for (const row of httpRows()) {
      const method = row.methods[0]!;
      const target = concrete(row);
      const anonymous = await call(method, target);
      const guest = await call(method, target, GUEST_TOKEN);
      const owner = await call(method, target, OWNER_TOKEN);
      const where = `${method} ${row.path}`;
      const refused = (status: number) => status === 401 || status === 403;
      if (row.access !== 'public' && anonymous.status !== 401)
        problems.push(`${where}: anonymous got ${anonymous.status}`);
      // A public page may refuse what it is sent (a sign-in without a token): only its reads must answer anyone.
      if (row.access === 'public' && method === 'GET' && refused(anonymous.status))
        problems.push(`${where}: public refused anonymous`);
      if ((row.access === 'owner' || row.access === 'metrics') && guest.status !== 403)
        problems.push(`${where}: a caller got ${guest.status}`);
      if (row.access === 'caller' && refused(guest.status)) problems.push(`${where}: a caller was refused`);
      if (row.access !== 'public' && refused(owner.status)) problems.push(`${where}: the owner got ${owner.status}`);
      for (const [who, answer] of [
        ['anonymous', anonymous],
        ['a caller', guest],
      ] as const)
        // The owner's task id is in the request: what must not come back is what the task holds.
        if (answer.text.includes(OWNER_MARK)) problems.push(`${where}: ${who} read the owner's data`);
    }
    expect(problems).toEqual([]);
  }, 600_000);

  it('answers 404 to every other spelling of every row, whoever asks', async () => {
    const problems: string[] = [];
    for (const row of httpRows()) {
      const method = row.methods[0]!;
      const asks = spellings(row).flatMap((spelled) =>
        [undefined, GUEST_TOKEN, OWNER_TOKEN].map(async (token) => {
          const answer = await call(method, spelled, token);
          if (answer.status !== 404) problems.push(`${method} ${spelled} (${token ?? 'nobody'}): ${answer.status}`);
          if (token !== OWNER_TOKEN && answer.text.includes(OWNER_MARK))
            problems.push(`${method} ${spelled}: the owner's data`);
        }),
      );
      await Promise.all(asks);
    }
    expect(problems).toEqual([]);
  }, 600_000);

  it("keeps the owner's task from a caller on every binding's read", async () => {
    const read = await fetch(`${url}/tasks/${ownerTask}`, { headers: { 'A2A-Version': '1.0', ...auth(GUEST_TOKEN) } });
    expect(read.status).toBe(404);
    const owner = await fetch(`${url}/tasks/${ownerTask}`, { headers: { 'A2A-Version': '1.0', ...auth(OWNER_TOKEN) } });
    expect(await owner.text()).toContain(OWNER_MARK);
  });

  it('answers a method a row does not take with 405 and the methods it does', async () => {
    const answer = await fetch(`${url}/agents`, { method: 'DELETE', headers: auth(OWNER_TOKEN) });
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('GET');
  });
});

function flipCase(letter: string): string {
  return letter === letter.toUpperCase() ? letter.toLowerCase() : letter.toUpperCase();
}
