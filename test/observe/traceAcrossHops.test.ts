import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ACCOUNT_METADATA_KEY, type AccountStep, type HopAccount } from '../../src/protocol/accounting';
import { AUDIENCE, CLIENTS, onBehalfOfEntry, startNetworkIssuer } from '../support/delegationNetwork';
import type { OidcIssuer } from '../support/oidcIssuer';
import { otlpReceiver, type OtlpSpan } from '../support/otlpReceiver';
import { freePort, spawnServe, type ServeProcess } from '../support/reliabilityProcess';

/**
 * Issue 33's network as real `lango serve` processes (the OTLP exporter
 * needs a real process, see tracing.test.ts), exporting to one real OTLP
 * receiver: X asks A with a token of the real OpenID provider, A calls B and
 * B calls C on X's behalf (token exchange). One trace holds the spans of
 * all three nodes, each node's request nested under the remote call of the
 * node before it; X's task accounts for the three hops, C's run as X with
 * A and B as actors.
 */
describe('one trace across A → B → C', () => {
  const nodes: ServeProcess[] = [];
  const dirs: string[] = [];
  let issuer: OidcIssuer;
  beforeAll(async () => {
    issuer = await startNetworkIssuer();
  }, 30_000);
  afterAll(async () => {
    while (nodes.length) await nodes.pop()!.stop();
    while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
    await issuer?.close();
  });

  async function serve(name: string, env: NodeJS.ProcessEnv, a2a: Record<string, unknown>): Promise<ServeProcess> {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), `lango-hops-${name}-`));
    dirs.push(cwd);
    const configFile = path.join(cwd, 'lango.config.json');
    fs.writeFileSync(
      configFile,
      JSON.stringify({ tools: { browser: { enabled: false } }, a2a: { agentName: name, ...a2a } }),
    );
    const node = await spawnServe({ cwd, configFile, port: await freePort(), env });
    nodes.push(node);
    return node;
  }
  const auth = (audience: string, actors?: string[]) => ({
    oidc: { issuer: issuer.url, audience, allowPrivateNetwork: true },
    ...(actors ? { delegation: { actors } } : {}),
    callers: [{ name: 'caller-x', oidcSubjects: ['x'], grant: { toolFamilies: ['librarian'] } }],
  });

  it('exports the spans of the three nodes in one trace, each hop under the call that reached it', async () => {
    const receiver = await otlpReceiver();
    try {
      const otel = (service: string) => ({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: service,
      });
      const c = await serve('node-c', otel('c'), { auth: auth(AUDIENCE.c, ['node-a', 'node-b']) });
      const b = await serve('node-b', otel('b'), {
        auth: auth(AUDIENCE.b, ['node-a']),
        remoteAgents: [onBehalfOfEntry('node-c', c.url, issuer, CLIENTS.b, AUDIENCE.c)],
      });
      const a = await serve('node-a', otel('a'), {
        auth: auth(AUDIENCE.a),
        remoteAgents: [onBehalfOfEntry('node-b', b.url, issuer, CLIENTS.a, AUDIENCE.b)],
      });
      const token = await issuer.token(CLIENTS.x, { resource: AUDIENCE.a });
      const reply = await fetch(a.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: 'hops-1', role: 'ROLE_USER', parts: [{ text: 'node-b: node-c: hello' }] } },
        }),
      });
      const body = (await reply.json()) as {
        result: { task: { status: { state: string }; metadata: Record<string, unknown> } };
      };
      expect(body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      const account = body.result.task.metadata[ACCOUNT_METADATA_KEY] as HopAccount;
      expect(hopsOf(account).map((hop) => [hop.name, hop.principal, hop.actors])).toEqual([
        ['node-a', 'caller-x', undefined],
        ['node-b', 'caller-x', ['node-a']],
        ['node-c', 'caller-x', ['node-b', 'node-a']],
      ]);
      // Each node flushes its spans as it stops.
      while (nodes.length) await nodes.pop()!.stop();

      const spans = receiver.spans();
      const request = spans.find((s) => s.service === 'a' && s.name === 'A2A SendMessage')!;
      expect(request).toBeDefined();
      const traced = spans.filter((s) => s.traceId === request.traceId);
      expect(new Set(traced.map((s) => s.service))).toEqual(new Set(['a', 'b', 'c']));
      const byId = new Map(traced.map((s) => [s.spanId, s]));
      const parentOf = (span: OtlpSpan) => byId.get(span.parentSpanId ?? '');
      const called = (service: string, remote: string) =>
        traced.find((s) => s.service === service && s.name === `remote_call ${remote}`)!;
      const served = (service: string) =>
        traced.find((s) => s.service === service && s.kind === 2 && s.name.startsWith('A2A Send'))!;
      expect(parentOf(served('b'))).toBe(called('a', 'node-b'));
      expect(parentOf(served('c'))).toBe(called('b', 'node-c'));
    } finally {
      await receiver.close();
    }
  }, 120_000);
});

/** Every hop of an account, the outermost first. */
function hopsOf(hop: HopAccount): HopAccount[] {
  const out = [hop];
  const visit = (steps: readonly AccountStep[]) => {
    for (const step of steps) {
      if (step.kind === 'agent') visit(step.steps);
      else if (step.kind === 'remote' && step.hop) out.push(...hopsOf(step.hop));
    }
  };
  visit(hop.steps);
  return out;
}
