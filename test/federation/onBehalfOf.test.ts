import fs from 'node:fs';
import path from 'node:path';
import { TaskState, type Task } from '@a2a-js/sdk';
import {
  ACCOUNT_METADATA_KEY,
  DELEGATION_METADATA_KEY,
  type AccountStep,
  type HopAccount,
} from '../../src/protocol/accounting';
import { SKILL_METADATA_KEY } from '../../src/protocol/skillExtension';
import { a2aClient, answerText, asTask, textRequest } from '../support/a2aClient';
import {
  AUDIENCE,
  CLIENTS,
  networkAuth,
  networkNodes,
  onBehalfOfEntry,
  startNetworkIssuer,
  type NetworkNode,
} from '../support/delegationNetwork';
import type { OidcIssuer } from '../support/oidcIssuer';
import { namedCaller } from '../../src/principal';
import { deadPort } from '../support/federationPeers';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatRequestBody, ScriptedCompletion } from '../support/openaiServer';
import type { WaterfallSpan } from '../../src/observe/waterfall';

/**
 * Issue 33's network, whole nodes on 127.0.0.1 and a real OpenID provider
 * as the token service: caller X asks node A, A delegates to B and B to C,
 * each call carrying X's token exchanged (RFC 8693) for the next node's
 * audience. Every hop runs as X with X's grants, narrowed by each actor's;
 * C's task records X as subject and A, B as actors; the account on X's
 * task holds all three nodes, and its token counts add up.
 */

const METRICS_TOKEN = 'metrics-token-4e1c8a7b';
const OWNER_TOKEN = 'owner-token-of-a-9f2d6b1c';
const usage = (input: number, output: number) => ({ prompt_tokens: input, completion_tokens: output });
const transfer = (agent: string, tokens: ReturnType<typeof usage>): ScriptedCompletion => ({
  toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: agent } }],
  usage: tokens,
});

/** The model call's last request's messages (a node's scripted model server recorded it). */
const lastMessages = (node: NetworkNode): ChatRequestBody['messages'] => node.model.requests.at(-1)!.body.messages;

/** What the node told the model its call of the tool `name` answered, in the model call's request. */
function toolAnswer(messages: ChatRequestBody['messages'], name: string): string | null | undefined {
  const calls = messages.flatMap((m) => (m.tool_calls ?? []) as Array<{ id: string; function: { name: string } }>);
  const id = calls.find((call) => call.function.name === name)?.id;
  return messages.find((m) => m.role === 'tool' && m.tool_call_id === id)?.content;
}

/** Every hop nested in `hop`, itself first, depth first. */
function hops(hop: HopAccount): HopAccount[] {
  const out = [hop];
  const visit = (steps: readonly AccountStep[]) => {
    for (const step of steps) {
      if (step.kind === 'agent') visit(step.steps);
      else if (step.kind === 'remote' && step.hop) out.push(...hops(step.hop));
    }
  };
  visit(hop.steps);
  return out;
}

/** Every step of a hop of the given kind, nested agents' included (not nested hops'). */
function stepsOf<K extends AccountStep['kind']>(hop: HopAccount, kind: K): Extract<AccountStep, { kind: K }>[] {
  const out: AccountStep[] = [];
  const visit = (steps: readonly AccountStep[]) => {
    for (const step of steps) {
      if (step.kind === kind) out.push(step);
      if (step.kind === 'agent') visit(step.steps);
    }
  };
  visit(hop.steps);
  return out as Extract<AccountStep, { kind: K }>[];
}

/** Every file under `dir`, read whole. */
function filesUnder(dir: string): Buffer[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).flatMap((entry) => {
    const full = path.join(entry.parentPath, entry.name);
    return entry.isFile() ? [fs.readFileSync(full)] : [];
  });
}

describe('on behalf of X, across A → B → C', () => {
  let issuer: OidcIssuer;
  const nodes = networkNodes();
  let a: NetworkNode;
  let b: NetworkNode;
  let c: NetworkNode;

  beforeAll(async () => {
    issuer = await startNetworkIssuer();
    // C: X may use the librarian; A and B (as callers) also the operator's files. Both may act for others.
    c = await nodes.start('node-c', {
      auth: networkAuth(issuer, AUDIENCE.c, {
        actors: ['node-a', 'node-b'],
        callers: {
          callers: [
            { name: 'caller-x', oidcSubjects: ['x'], grant: { toolFamilies: ['librarian'] } },
            { name: 'node-a', oidcSubjects: ['node-a'], grant: { toolFamilies: ['librarian', 'fs'] } },
            { name: 'node-b', oidcSubjects: ['node-b'], grant: { toolFamilies: ['librarian', 'fs'] } },
          ],
        },
      }),
    });
    b = await nodes.start('node-b', {
      auth: networkAuth(issuer, AUDIENCE.b, {
        actors: ['node-a'],
        callers: {
          callers: [
            { name: 'caller-x', oidcSubjects: ['x'], grant: { toolFamilies: ['librarian'] } },
            { name: 'node-a', oidcSubjects: ['node-a'], grant: { toolFamilies: ['librarian', 'fs'] } },
          ],
        },
      }),
      remoteAgents: [onBehalfOfEntry('node-c', c.url, issuer, CLIENTS.b, AUDIENCE.c)],
    });
    a = await nodes.start(
      'node-a',
      {
        auth: networkAuth(issuer, AUDIENCE.a, {
          callers: {
            callers: [
              { name: 'caller-x', oidcSubjects: ['x'], grant: { toolFamilies: ['librarian'] } },
              { name: 'boss', bearerTokens: [OWNER_TOKEN], owner: true },
            ],
            bearerTokens: ['static-token-of-a-peer-0d5c'],
          },
        }),
        remoteAgents: [onBehalfOfEntry('node-b', b.url, issuer, CLIENTS.a, AUDIENCE.b)],
      },
      { observability: { metricsToken: METRICS_TOKEN } },
    );
  }, 60_000);
  afterAll(async () => {
    await nodes.closeAll();
    await issuer?.close();
  });

  it("runs every hop as X with X's grants, records the chain at C, and accounts for all three nodes", async () => {
    a.model.push(transfer('node-b', usage(10, 2)));
    b.model.push(transfer('node-c', usage(20, 3)));
    c.model.push(
      transfer('librarian', usage(30, 4)),
      {
        toolCalls: [
          { name: 'save_knowledge', arguments: { kind: 'fact', content: 'X asked through A and B' } },
          { name: 'fs_read', arguments: { path: 'notes.txt' } },
        ],
        usage: usage(40, 5),
      },
      { text: 'saved for X', usage: usage(50, 6) },
    );
    const tokenOfX = await issuer.token(CLIENTS.x, { resource: AUDIENCE.a });
    const client = await a2aClient(a.url, 'JSONRPC', { authorization: `Bearer ${tokenOfX}` });
    const task: Task = asTask(await client.sendMessage(textRequest('keep this for me, through node-b and node-c')));

    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(task)).toBe('saved for X');

    const account = task.metadata?.[ACCOUNT_METADATA_KEY] as HopAccount;
    const [atA, atB, atC] = hops(account);
    expect([atA, atB, atC].map((hop) => [hop.name, hop.node, hop.principal, hop.actors])).toEqual([
      ['node-a', a.url, 'caller-x', undefined],
      ['node-b', b.url, 'caller-x', ['node-a']],
      // C's task: X the subject, B (which called it) and A before it the actors.
      ['node-c', c.url, 'caller-x', ['node-b', 'node-a']],
    ]);
    // C's own task is X's (X reads it with a token of its own for C), and records the chain hop by hop.
    const xAtC = await a2aClient(c.url, 'JSONRPC', {
      authorization: `Bearer ${await issuer.token(CLIENTS.x, { resource: AUDIENCE.c })}`,
    });
    const taskAtC = await xAtC.getTask({ tenant: '', id: atC.taskId!, historyLength: 0 });
    expect(taskAtC.metadata?.[DELEGATION_METADATA_KEY]).toEqual({
      subject: 'caller-x',
      hops: [
        { actor: 'node-a', for: 'caller-x' },
        { actor: 'node-b', for: 'node-a' },
      ],
    });
    expect([atA.tokens, atB.tokens, atC.tokens]).toEqual([
      { input: 10, output: 2 },
      { input: 20, output: 3 },
      { input: 120, output: 15 },
    ]);
    expect(atC.total).toEqual(atC.tokens);
    expect(atB.total).toEqual({ input: 140, output: 18 });
    expect(account.total).toEqual({ input: 150, output: 20 });

    // A tool X may use ran on C; one only A (or B) could use there was refused, as X.
    expect(stepsOf(atC, 'tool').map((tool) => [tool.name, tool.ok])).toEqual([
      ['save_knowledge', true],
      ['fs_read', false],
    ]);
    const saved = await c.app.stores.knowledge.searchKnowledge(namedCaller('caller-x'), 'asked', { limit: 5 });
    expect(saved.map((entry) => entry.content)).toEqual(['X asked through A and B']);
    expect(toolAnswer(lastMessages(c), 'fs_read')).toContain(
      'the caller "caller-x" is not granted the "fs" tool family',
    );

    // A's metrics count the call to B, and what B (and C under it) spent; A's peer status its last hop.
    const metrics = await (
      await fetch(`${a.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    expect(metrics).toMatch(/^lango_remote_call_duration_seconds_count\{peer="node-b",outcome="ok"\} 1$/m);
    expect(metrics).toMatch(/^lango_remote_tokens_total\{peer="node-b",direction="input"\} 140$/m);
    expect(metrics).toMatch(/^lango_remote_tokens_total\{peer="node-b",direction="output"\} 18$/m);
    expect(a.app.peers()[0]).toMatchObject({
      name: 'node-b',
      skills: expect.arrayContaining(['lango-orchestrator', 'librarian', 'node-c']),
      lastHopMs: expect.any(Number),
      onBehalfOf: { mode: 'required', ok: true },
    });

    // The console reads the same tree from A's task rows, for the owner.
    const view = await fetch(`${a.url}/console/api/tasks/${task.id}/account`, {
      headers: { authorization: `Bearer ${OWNER_TOKEN}` },
    });
    expect(await view.json()).toEqual({ taskId: task.id, account });
    // Its waterfall of the turn nests what B and C ran under A's call to B, each step named by its node.
    const owner = { headers: { authorization: `Bearer ${OWNER_TOKEN}` } };
    const { turns } = (await (await fetch(`${a.url}/console/api/timelines/${task.id}`, owner)).json()) as {
      turns: { id: string }[];
    };
    const { waterfall } = (await (await fetch(`${a.url}/console/api/turns/${turns.at(-1)!.id}`, owner)).json()) as {
      waterfall: WaterfallSpan;
    };
    const call = waterfall.children.flatMap((agent) => agent.children).find((span) => span.kind === 'remote')!;
    expect(call.name).toBe('node-b');
    const below = (span: WaterfallSpan, depth = 0): string[] =>
      span.children.flatMap((child) => [
        `${'. '.repeat(depth)}${child.node} ${child.kind} ${child.name}`,
        ...below(child, depth + 1),
      ]);
    expect(below(call)).toEqual([
      'node-b agent lango-orchestrator',
      'node-b agent node-c',
      '. node-b remote node-c',
      '. . node-c agent lango-orchestrator',
      '. . node-c agent librarian',
      '. . . node-c tool save_knowledge',
      '. . . node-c tool fs_read',
    ]);

    // A and B each exchanged once; nothing any node wrote or logged holds a token.
    expect(issuer.seen.filter((p) => p === '/token').length).toBeGreaterThanOrEqual(3);
    // No token at all: X's, nor any the exchanges made (every token of the issuer is a JWT).
    const jwt = /eyJ[\w-]{8,}\.eyJ[\w-]{8,}\./;
    expect(tokenOfX).toMatch(jwt);
    for (const node of [a, b, c]) {
      expect(JSON.stringify(node.logger.records)).not.toContain(tokenOfX);
      expect(JSON.stringify(node.logger.records)).not.toMatch(jwt);
      expect(filesUnder(node.dir).some((file) => file.includes(tokenOfX))).toBe(false);
      expect(filesUnder(node.dir).some((file) => jwt.test(file.toString('latin1')))).toBe(false);
    }
  });

  it('sends a skill-targeted message straight to the remote owning the skill, with no routing step by the model', async () => {
    const asked = a.model.requests.length;
    b.model.push({ text: 'B answers the skill', usage: usage(7, 1) });
    const tokenOfX = await issuer.token(CLIENTS.x, { resource: AUDIENCE.a });
    const client = await a2aClient(a.url, 'HTTP+JSON', { authorization: `Bearer ${tokenOfX}` });
    const task = asTask(
      await client.sendMessage({ ...textRequest('straight to B'), metadata: { [SKILL_METADATA_KEY]: 'node-b' } }),
    );
    expect(answerText(task)).toBe('B answers the skill');
    expect(a.model.requests.length).toBe(asked);
    const account = task.metadata?.[ACCOUNT_METADATA_KEY] as HopAccount;
    expect(account.steps.map((step) => [step.kind, step.name])).toEqual([['agent', 'node-b']]);
    expect(account.total).toEqual({ input: 7, output: 1 });
  });

  it("refuses the delegation to B with a clear message when X's caller has nothing to exchange (onBehalfOf: required)", async () => {
    const before = b.model.requests.length;
    a.model.push(transfer('node-b', usage(1, 1)));
    const client = await a2aClient(a.url, 'JSONRPC', { authorization: 'Bearer static-token-of-a-peer-0d5c' });
    const task = asTask(await client.sendMessage(textRequest('ask node-b with a static token')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    expect(answerOf(task)).toMatch(
      /The remote agent node-b was not called: calls to node-b are made on behalf of their caller \(auth.onBehalfOf: required\)/,
    );
    expect(b.model.requests.length).toBe(before);
  });
});

describe('on-behalf-of faults: each a clear refusal or fallback, nothing run as the wrong principal, the node up', () => {
  let issuer: OidcIssuer;
  const nodes = networkNodes();
  const servers: http.Server[] = [];
  let a: NetworkNode;
  let b: NetworkNode;

  /** A token endpoint on loopback that answers every request with `answer` (or never, when undefined). */
  const endpoint = async (answer?: (res: http.ServerResponse) => void): Promise<string> => {
    const server = http.createServer((_req, res) => answer?.(res));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  };

  beforeAll(async () => {
    issuer = await startNetworkIssuer();
    b = await nodes.start('node-b', {
      auth: networkAuth(issuer, AUDIENCE.b, {
        actors: ['node-a'],
        callers: {
          callers: [
            { name: 'caller-x', oidcSubjects: ['x'], grant: { toolFamilies: ['librarian'] } },
            { name: 'node-a', oidcSubjects: ['node-a'], grant: { toolFamilies: [] } },
          ],
        },
      }),
    });
    const entry = (name: string, tokenUrl: string, mode: 'required' | 'preferred' = 'required') =>
      onBehalfOfEntry(name, b.url, tokenUrl, CLIENTS.a, AUDIENCE.b, mode);
    a = await nodes.start('node-a', {
      cardFetchTimeoutMs: 1500,
      auth: networkAuth(issuer, AUDIENCE.a, {
        callers: {
          callers: [{ name: 'caller-x', oidcSubjects: ['x'], grant: { toolFamilies: ['librarian'] } }],
          bearerTokens: ['static-token-of-a-peer-0d5c'],
        },
      }),
      remoteAgents: [
        entry('b-preferred', `${issuer.url}/token`, 'preferred'),
        entry('b-down', `http://127.0.0.1:${await deadPort()}/token`),
        entry('b-slow', await endpoint()),
        entry('b-garbage', await endpoint((res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>'))),
        entry(
          'b-tokenless',
          await endpoint((res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"token":"no"}')),
        ),
        entry(
          'b-refusing',
          await endpoint((res) =>
            res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}'),
          ),
        ),
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await nodes.closeAll();
    for (const server of servers) server.closeAllConnections();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    await issuer?.close();
  });

  it("falls back to the node's own client credentials for a caller with nothing to exchange (onBehalfOf: preferred)", async () => {
    a.model.push(transfer('b-preferred', usage(1, 1)));
    b.model.push({ text: 'hello from B', usage: usage(2, 2) });
    const client = await a2aClient(a.url, 'JSONRPC', { authorization: 'Bearer static-token-of-a-peer-0d5c' });
    const task = asTask(await client.sendMessage(textRequest('greet b-preferred')));
    expect(answerText(task)).toBe('hello from B');
    // B ran it as node A itself (its own token, no one acting for anyone), never as someone else.
    const atB = hops(task.metadata?.[ACCOUNT_METADATA_KEY] as HopAccount)[1];
    expect([atB.principal, atB.actors]).toEqual(['node-a', undefined]);
  });

  it.each([
    ['down', 'b-down', /on-behalf-of token exchange to http:\/\/127\.0\.0\.1:\d+ failed: .*(refused|ECONNREFUSED)/i],
    [
      'slow',
      'b-slow',
      /on-behalf-of token exchange to http:\/\/127\.0\.0\.1:\d+ failed: .*(timed out|timeout|aborted)/i,
    ],
    ['answering garbage', 'b-garbage', /on-behalf-of token exchange to .* failed: unreadable answer/],
    [
      'answering without a token',
      'b-tokenless',
      /on-behalf-of token exchange to .* failed: no access_token in the answer/,
    ],
    ['refusing the exchange', 'b-refusing', /on-behalf-of token exchange to .* failed: HTTP 400 \(invalid_grant\)/],
  ])('refuses the call when the exchange endpoint is %s', async (_what, remote, reason) => {
    const before = b.model.requests.length;
    a.model.push(transfer(remote, usage(1, 1)), { text: 'I answered myself', usage: usage(1, 1) });
    const tokenOfX = await issuer.token(CLIENTS.x, { resource: AUDIENCE.a });
    const client = await a2aClient(a.url, 'JSONRPC', { authorization: `Bearer ${tokenOfX}` });
    const task = asTask(await client.sendMessage(textRequest(`ask ${remote}`)));
    expect(answerText(task)).toBe('I answered myself');
    const note = lastMessages(a).find(
      (m) => m.role === 'user' && String(m.content).startsWith('[note from the runtime]'),
    );
    expect(note?.content).toMatch(new RegExp(`The remote agent ${remote} failed: remote agent ${remote} not called: `));
    expect(note?.content).toMatch(reason);
    expect(b.model.requests.length).toBe(before);
    expect((await fetch(`${a.url}/readyz`)).status).toBe(200);
  });
});

/** The text of a task's status message. */
function answerOf(task: Task): string {
  return (task.status?.message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}
