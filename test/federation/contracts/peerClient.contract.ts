import { randomUUID } from 'node:crypto';
import { AgentCard, Role, TaskState, type SendMessageRequest, type StreamResponse } from '@a2a-js/sdk';
import type { RequestOptions } from '@a2a-js/sdk/client';
import { Agent } from 'undici';
import { loadPeer } from '../../../src/federation/loader';
import type { PeerClient } from '../../../src/federation/peerClient';
import { DEFAULT_PEER_LIMITS, PeerCallMeters } from '../../../src/federation/peerCallMeter';
import type { PeerFetchOptions } from '../../../src/federation/peerFetch';
import { isProtocolError, partsText } from '../../../src/federation/remoteClient';
import { deadPort, startPeer, type PeerOptions } from '../../support/federationPeers';
import { startMisbehavingPeer, type MisbehavingPeer, type Misbehaviour } from '../../support/misbehavingPeer';
import { baseOptions, entries } from '../../support/federationRun';
import { waitFor } from '../../support/waitFor';

/** One of the clients a remote call may get (`peerClient.ts`), built for a card over a peer's transport. */
export interface PeerClientFactory {
  name: string;
  /** The A2A versions of the peers it serves. */
  versions: ReadonlyArray<'1.0' | '0.3'>;
  make(card: AgentCard, transport: PeerFetchOptions, polling: boolean): Promise<PeerClient>;
}

const LIMITS = { ...DEFAULT_PEER_LIMITS, maxAnswerBytes: 64 * 1024, maxEvents: 50, maxDurationMs: 20_000 };

/** A send of `text` as the node's remote calls make it (`remoteClient.ts` `userMessage`). */
export function sendParams(text: string, ids: { taskId?: string; contextId?: string } = {}): SendMessageRequest {
  return {
    tenant: '',
    message: {
      messageId: randomUUID(),
      contextId: ids.contextId ?? '',
      taskId: ids.taskId ?? '',
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
      metadata: { hop: 1 },
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  };
}

/** What a stream said, without the ids and times the peer makes up. */
export function streamShape(events: StreamResponse[]): unknown[][] {
  return events.map((e) => {
    const p = e.payload;
    switch (p?.$case) {
      case 'task':
        return ['task', p.value.status?.state, p.value.artifacts.map((a) => partsText(a.parts)).join('\n')];
      case 'statusUpdate':
        return ['status', p.value.status?.state, partsText(p.value.status?.message?.parts)];
      case 'artifactUpdate':
        return ['artifact', partsText(p.value.artifact?.parts)];
      default:
        return [p?.$case];
    }
  });
}

/**
 * The contract every peer client keeps, run against each (as the store contracts run against each database):
 * every method a remote call uses, against real SDK peers of each version it serves; the peer's A2A errors
 * thrown as the SDK throws them and recorded on the call's meter; streams read as sent and left cleanly; every
 * answer bounded by the peer's limits; nothing sent outside a call.
 */
export function peerClientContract(factory: PeerClientFactory): void {
  describe(`${factory.name} (the peer client contract)`, () => {
    const dispatcher = new Agent();
    const open: Array<{ close(): Promise<void> }> = [];
    let meters: PeerCallMeters;
    afterEach(async () => {
      while (open.length) await open.pop()!.close();
    });
    afterAll(() => dispatcher.destroy());

    const transport = (legacy: boolean): PeerFetchOptions => {
      meters = new PeerCallMeters();
      return { dispatcher, limits: LIMITS, meters, legacy, onDeviation: () => undefined };
    };
    /** A fresh call: its signal and meter. */
    const call = (ms = 20_000) => {
      const signal = AbortSignal.timeout(ms);
      const options: RequestOptions = { signal, serviceParameters: { 'x-peer': 'k' } };
      return { meter: meters.start(signal), options };
    };
    /** The card as the federation pins it (`loader.ts`): what a client is built from in the node. */
    const cardOf = async (cardUrl: string): Promise<AgentCard> => {
      const [entry] = entries({ name: 'peer', agentCardUrl: cardUrl });
      const loaded = await loadPeer(entry!, { ...baseOptions(), dispatcher });
      if (!loaded.ok) throw new Error(`the test peer's card did not load: ${loaded.reason}`);
      return loaded.peer.sdkCard;
    };
    const peerClient = async (options: PeerOptions, polling = !(options.streaming ?? true)) => {
      const peer = await startPeer({ streaming: true, ...options });
      open.push(peer);
      const card = await cardOf(`${peer.url}.well-known/agent-card.json`);
      const client = await factory.make(card, transport(options.version === '0.3'), polling);
      return { peer, client };
    };
    /** A v1.0 peer answering `mode` on its endpoint. */
    const misbehaving = async (mode: Misbehaviour, streaming = false) => {
      const peer: MisbehavingPeer = await startMisbehavingPeer({ name: 'weird', streaming });
      open.push(peer);
      peer.call = mode;
      return { peer, client: await factory.make(await cardOf(peer.cardUrl), transport(false), !streaming) };
    };
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (e: unknown) => e,
      );

    describe.each(factory.versions.map((version) => ({ version })))('against a v$version SDK peer', ({ version }) => {
      const methods = version === '1.0' ? ['SendMessage', 'SendStreamingMessage'] : ['message/send', 'message/stream'];

      it('sends a message and returns the completed task', async () => {
        const { peer, client } = await peerClient({ version, streaming: true }, false);
        const result = await client.sendMessage(sendParams('hello'), call().options);
        expect('status' in result && result.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        expect('artifacts' in result && partsText(result.artifacts[0]?.parts)).toBe('echo: hello');
        expect(peer.requests.map((r) => r.method)).toEqual([methods[0]]);
        expect(peer.requests[0]!.headers['x-peer']).toBe('k');
      });

      it('streams the task, the answer and the end', async () => {
        const { peer, client } = await peerClient({ version, streaming: true });
        const events: StreamResponse[] = [];
        for await (const event of client.sendMessageStream(sendParams('hello'), call().options)) events.push(event);
        const shape = streamShape(events);
        expect(shape[0]).toEqual(['task', expect.anything(), expect.any(String)]);
        // A v1.0 peer streams the answer as an artifact update; the v0.3 test peer sends its one final task.
        const answered = shape.some(([kind, , text]) => kind === 'task' && text === 'echo: hello');
        expect(answered || shape.some(([kind, text]) => kind === 'artifact' && text === 'echo: hello')).toBe(true);
        expect(shape[shape.length - 1]!.slice(0, 2)).toEqual([expect.any(String), TaskState.TASK_STATE_COMPLETED]);
        expect(peer.requests.map((r) => r.method)).toEqual([methods[1]]);
      });

      it('sends without blocking to a peer that does not stream, and reads the task back', async () => {
        const { client } = await peerClient({ version, streaming: false }, true);
        const first = await client.sendMessage(sendParams('ping'), call().options);
        const id = (first as { id: string }).id;
        expect(id).toEqual(expect.any(String));
        const task = await waitFor(
          async () => {
            const t = await client.getTask({ tenant: '', id, historyLength: 0 }, call().options);
            return t.status?.state === TaskState.TASK_STATE_COMPLETED && t;
          },
          20_000,
          'the polled task completed',
        );
        expect(partsText(task.artifacts[0]?.parts)).toBe('echo: ping');
      });

      it('continues a task that asked for input', async () => {
        const { client } = await peerClient({ version, behaviour: 'ask', streaming: true }, false);
        const asked = (await client.sendMessage(sendParams('weather?'), call().options)) as {
          id: string;
          contextId: string;
          status?: { state: TaskState; message?: { parts: never[] } };
        };
        expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
        const ids = { taskId: asked.id, contextId: asked.contextId };
        const answered = await client.sendMessage(sendParams('Paris', ids), call().options);
        expect('artifacts' in answered && partsText(answered.artifacts[0]?.parts)).toBe('weather in Paris: sunny');
      });

      // Against a v1.0 peer only: the v0.3 test peer publishes nothing until its work ends, so there is no running
      // task to cancel there (a test that cannot apply is not defined, rather than skipped).
      if (version === '1.0')
        it('cancels a running task', async () => {
          const { peer, client } = await peerClient({ version, behaviour: 'slow', streaming: false }, true);
          const first = (await client.sendMessage(sendParams('work'), call().options)) as { id: string };
          await peer.working;
          const canceled = await client.cancelTask({ tenant: '', id: first.id, metadata: undefined }, call().options);
          expect([TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_WORKING]).toContain(canceled.status?.state);
          expect(peer.cancelled).toContain(first.id);
        });

      it("throws the peer's A2A error as the SDK does, and the call's meter names it a rejection", async () => {
        const { client } = await peerClient({ version, streaming: true });
        for (const ask of [
          (o: RequestOptions) => client.getTask({ tenant: '', id: 'no-such-task', historyLength: 0 }, o),
          (o: RequestOptions) => client.cancelTask({ tenant: '', id: 'no-such-task', metadata: undefined }, o),
        ]) {
          const { meter, options } = call();
          const error = await failure(ask(options));
          expect(isProtocolError(error)).toBe(true);
          expect(meter).toMatchObject({
            responded: true,
            invalid: undefined,
            rejected: expect.stringMatching(/task/i),
          });
        }
      });
    });

    it('refuses a request outside every call before it leaves', async () => {
      const { peer, client } = await peerClient({ version: factory.versions[0], streaming: true });
      const error = await failure(
        client.getTask({ tenant: '', id: 'x', historyLength: 0 }, { signal: AbortSignal.timeout(20_000) }),
      );
      expect(String(error)).toMatch(/outside a delegated call/);
      expect(peer.requests).toEqual([]);
    });

    it('fails as a transport fault, not as the peer speaking, when nobody listens', async () => {
      const port = await deadPort();
      const url = `http://127.0.0.1:${port}/`;
      const card = AgentCard.fromJSON({
        name: 'gone',
        version: '1',
        supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
        capabilities: { streaming: false },
      });
      if (!factory.versions.includes('1.0')) return;
      const client = await factory.make(card, transport(false), true);
      const { meter, options } = call();
      const error = await failure(client.getTask({ tenant: '', id: 'x', historyLength: 0 }, options));
      expect(error).toBeDefined();
      expect(isProtocolError(error)).toBe(false);
      expect(meter.responded).toBe(false);
    });

    // For a client that speaks v1.0 (every one so far): the misbehaving peer is a v1.0 peer.
    if (factory.versions.includes('1.0'))
      describe('bounds (a v1.0 peer that misbehaves)', () => {
        it('stops reading an answer larger than maxAnswerBytes and says so', async () => {
          const { client } = await misbehaving('huge');
          const { meter, options } = call();
          expect(await failure(client.getTask({ tenant: '', id: 'x', historyLength: 0 }, options))).toBeDefined();
          expect(meter.invalid).toMatch(/maxAnswerBytes \(65536 bytes\)/);
        });

        it('stops reading a stream past maxEvents and says so', async () => {
          const { client } = await misbehaving('endless', true);
          const { meter, options } = call();
          const reading = (async () => {
            for await (const _event of client.sendMessageStream(sendParams('x'), options)) void _event;
          })();
          expect(await failure(reading)).toBeDefined();
          expect(meter.invalid).toMatch(/maxEvents \(50\)/);
        });

        it('names an answer that is not JSON', async () => {
          const { client } = await misbehaving('garbage');
          const { meter, options } = call();
          expect(await failure(client.getTask({ tenant: '', id: 'x', historyLength: 0 }, options))).toBeDefined();
          expect(meter.invalid).toMatch(/^not JSON/);
        });

        it('gives up when the call ends, though the peer never answers', async () => {
          const { client } = await misbehaving('slow');
          const { options } = call(300);
          // The peer never answers: the call can only end by its signal, whose reason it fails with.
          const error = await failure(client.getTask({ tenant: '', id: 'x', historyLength: 0 }, options));
          expect(options.signal!.aborted).toBe(true);
          expect(error).toMatchObject({ name: expect.stringMatching(/^(TimeoutError|AbortError)$/) });
        });

        it('leaves a stream it stops reading without an uncaught error', async () => {
          const uncaught: unknown[] = [];
          const onUncaught = (error: unknown) => uncaught.push(error);
          process.on('uncaughtException', onUncaught);
          // Its own connections, so that ending them all is the event after which an abandoned stream had its chance.
          const own = new Agent();
          try {
            const peer: MisbehavingPeer = await startMisbehavingPeer({ name: 'weird', streaming: true });
            open.push(peer);
            peer.call = 'heartbeats';
            const client = await factory.make(
              await cardOf(peer.cardUrl),
              { ...transport(false), dispatcher: own },
              false,
            );
            for (let i = 0; i < 3; i++) {
              for await (const _event of client.sendMessageStream(sendParams('x'), call().options)) break;
            }
            // Every connection those streams came on is ended: a stream left unhandled would throw now.
            await own.destroy();
            await peer.close();
            expect(uncaught).toEqual([]);
          } finally {
            process.off('uncaughtException', onUncaught);
            await own.destroy();
          }
        });
      });
  });
}
