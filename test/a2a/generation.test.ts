import * as grpc from '@grpc/grpc-js';
import { decodeErrorInfo, decodeStatus, GRPC_STATUS_DETAILS_BIN } from '@a2a-js/sdk/errors/grpc';
import { GENERATION_EXTENSION, GENERATION_METADATA_KEY } from '../../src/protocol/generationExtension';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { longPollWaiting } from '../support/longPoll';
import { PacedRunner } from '../support/pacedRunner';
import { grpcCall } from '../support/grpcCall';
import { openSse, resultOf, rpc, type SseFrame } from '../support/sse';
import { waitFor } from '../support/waitFor';

/**
 * The generation extension on one node (SQLite), through real sockets
 * (issue 27): generations on tasks and events, SSE ids, resuming a cut
 * stream, the GetTask long poll, the SendMessage precondition.
 */

const EXTENSION = { 'A2A-Extensions': GENERATION_EXTENSION };
const message = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { messageId: `m-${Math.random().toString(36).slice(2)}`, role: 'ROLE_USER', parts: [{ text }], ...extra },
});
/** The generation a stream response or task carries in its metadata. */
const generationOf = (result: Record<string, any>): unknown => {
  const value = result.task ?? result.statusUpdate ?? result.artifactUpdate ?? result;
  return value.metadata?.[GENERATION_METADATA_KEY];
};
const chunkText = (result: Record<string, any>) =>
  (result.artifactUpdate?.artifact?.parts ?? []).map((p: { text?: string }) => p.text ?? '').join('');
const taskIdOf = (result: Record<string, any>): string =>
  result.task?.id ?? result.statusUpdate?.taskId ?? result.artifactUpdate?.taskId;

/** Reads frames until `done` says so or the stream ends. */
async function readUntil(
  stream: { next(): Promise<SseFrame | undefined> },
  done: (frames: SseFrame[]) => boolean,
): Promise<SseFrame[]> {
  const frames: SseFrame[] = [];
  for (let frame = await stream.next(); frame; frame = frame && !done(frames) ? await stream.next() : undefined) {
    frames.push(frame);
    if (done(frames)) break;
  }
  return frames;
}

const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
};

describe('the generation extension on one node', () => {
  let node: A2ATestNode;
  let runner: PacedRunner;
  beforeEach(async () => {
    runner = new PacedRunner(12);
    node = await startA2ANode({ runner, config: { a2a: { longPollTimeout: '400ms' } } });
  });
  afterEach(async () => {
    runner.release();
    await node.close();
  });

  it('offers the extension on the card; a client that does not activate it sees no generation and no SSE id', async () => {
    const card = (await (await fetch(`${node.url}/.well-known/agent-card.json`)).json()) as Record<string, any>;
    expect(card.capabilities.extensions).toContainEqual(
      expect.objectContaining({
        uri: GENERATION_EXTENSION,
        required: false,
        params: expect.objectContaining({ eventsKeptAfterEndSeconds: 300, longPollTimeoutSeconds: 0.4 }),
      }),
    );
    runner.release();
    const stream = await openSse(`${node.url}/`, rpc('SendStreamingMessage', message('plain')));
    const frames = await readUntil(stream, () => false);
    expect(frames.length).toBeGreaterThan(12);
    expect(frames.every((f) => f.id === undefined)).toBe(true);
    expect(frames.some((f) => JSON.stringify(f.data).includes(GENERATION_EXTENSION))).toBe(false);
    expect(stream.headers['a2a-extensions']).toBeUndefined();
  });

  it('numbers every event of an activated stream from 1, one apart, with an SSE id of task and generation', async () => {
    runner.release();
    const stream = await openSse(`${node.url}/`, rpc('SendStreamingMessage', message('count')), EXTENSION);
    expect(stream.headers['a2a-extensions']).toBe(GENERATION_EXTENSION);
    const frames = await readUntil(stream, () => false);
    const results = frames.map(resultOf);
    const taskId = taskIdOf(results[0]);
    expect(results.map(generationOf)).toEqual(results.map((_, i) => i + 1));
    expect(frames.map((f) => f.id)).toEqual(results.map((_, i) => `${taskId}:${i + 1}`));
    // GetTask (activated) answers the generation the last event carried.
    const got = await post(`${node.url}/`, rpc('GetTask', { id: taskId }), EXTENSION);
    expect(generationOf(got.body.result)).toBe(results.length);
    const plain = await post(`${node.url}/`, rpc('GetTask', { id: taskId }));
    expect(generationOf(plain.body.result)).toBeUndefined();
  });

  it('resumes a stream cut after k of n chunks with Last-Event-ID: chunks k+1..n once each, the answer whole', async () => {
    const stream = await openSse(`${node.url}/`, rpc('SendStreamingMessage', message('cut me')), EXTENSION);
    runner.release(4);
    const before = await readUntil(stream, (frames) => frames.filter((f) => chunkText(resultOf(f))).length === 4);
    stream.cut();
    runner.release(3); // the task goes on while nobody reads it
    const last = before.at(-1)!;
    const taskId = taskIdOf(resultOf(last));
    const resumed = await openSse(`${node.url}/`, rpc('SubscribeToTask', { id: taskId }), {
      ...EXTENSION,
      'Last-Event-ID': last.id!,
    });
    runner.release();
    const after = await readUntil(resumed, () => false);
    const generations = [...before, ...after].map((f) => generationOf(resultOf(f)));
    expect(generations).toEqual(generations.map((_, i) => i + 1));
    const answer = [...before, ...after].map((f) => chunkText(resultOf(f))).join('');
    expect(answer).toBe(runner.answer);
    expect(resultOf(after.at(-1)!).statusUpdate?.status?.state).toBe('TASK_STATE_COMPLETED');
    expect(runner.turns).toEqual(['cut me']);
  });

  it('resumes over HTTP+JSON too: SubscribeToTask with Last-Event-ID, each event carrying its generation', async () => {
    const stream = await openSse(`${node.url}/`, rpc('SendStreamingMessage', message('over rest')), EXTENSION);
    runner.release(3);
    const before = await readUntil(stream, (frames) => frames.filter((f) => chunkText(resultOf(f))).length === 3);
    stream.cut();
    // Its first event is awaited before its headers (as the SDK's handler does): one is let out first.
    runner.release(1);
    const last = before.at(-1)!;
    const taskId = taskIdOf(resultOf(last));
    const resumed = await openSse(
      `${node.url}/tasks/${taskId}:subscribe`,
      undefined,
      { ...EXTENSION, 'Last-Event-ID': last.id! },
      'GET',
    );
    runner.release();
    const after = await readUntil(resumed, () => false);
    const generations = [...before, ...after].map((f) => generationOf(resultOf(f)));
    expect(generations).toEqual(generations.map((_, i) => i + 1));
    expect([...before, ...after].map((f) => chunkText(resultOf(f))).join('')).toBe(runner.answer);
  });

  it('gives a stream resumed after events it no longer has the task as it stands, and refuses another task’s id', async () => {
    runner.release();
    // A blocking send keeps no events (nobody watched it): resuming from its first generation gets the task.
    const sent = await post(`${node.url}/`, rpc('SendMessage', message('blocking')), EXTENSION);
    const task = sent.body.result.task;
    expect(generationOf(sent.body.result)).toBeGreaterThan(1);
    const resumed = await openSse(`${node.url}/`, rpc('SubscribeToTask', { id: task.id }), {
      ...EXTENSION,
      'Last-Event-ID': `${task.id}:1`,
    });
    const frames = await readUntil(resumed, () => false);
    expect(frames.map((f) => resultOf(f).task?.status?.state)).toEqual(['TASK_STATE_COMPLETED']);
    expect(frames[0].id).toBe(`${task.id}:${generationOf(sent.body.result)}`);

    const wrong = await post(`${node.url}/`, rpc('SubscribeToTask', { id: task.id }), {
      ...EXTENSION,
      'Last-Event-ID': 'another-task:3',
    });
    expect(wrong.body.error.code).toBe(-32602);
    expect(wrong.body.error.message).toContain('Last-Event-ID');
  });

  it('ends a stream resumed past the task’s generation once the task does, starting from the task as it stands', async () => {
    const stream = await openSse(`${node.url}/`, rpc('SendStreamingMessage', message('resume past me')), EXTENSION);
    runner.release(2);
    const before = await readUntil(stream, (frames) => frames.filter((f) => chunkText(resultOf(f))).length === 2);
    stream.cut();
    const taskId = taskIdOf(resultOf(before[0]));
    const standing = generationOf(resultOf(before.at(-1)!)) as number;
    // The largest generation a client can send: no event of the task is ever numbered past it.
    const resumed = await openSse(`${node.url}/`, rpc('SubscribeToTask', { id: taskId }), {
      ...EXTENSION,
      'Last-Event-ID': `${taskId}:${Number.MAX_SAFE_INTEGER}`,
    });
    const first = await resumed.next();
    expect(resultOf(first!).task).toMatchObject({ id: taskId, status: { state: 'TASK_STATE_WORKING' } });
    expect(generationOf(resultOf(first!))).toBe(standing);
    runner.release();
    // The stream ends by itself with the task: readUntil returns when the server closes it.
    const after = await readUntil(resumed, () => false);
    expect(resultOf(after.at(-1)!).statusUpdate?.status?.state).toBe('TASK_STATE_COMPLETED');
    const generations = [first!, ...after].map((f) => generationOf(resultOf(f)));
    expect(generations).toEqual(generations.map((_, i) => standing + i));

    // Past the end of a task that has ended: the task as it stands, and nothing more.
    const ended = await openSse(`${node.url}/`, rpc('SubscribeToTask', { id: taskId }), {
      ...EXTENSION,
      'Last-Event-ID': `${taskId}:${Number.MAX_SAFE_INTEGER}`,
    });
    const frames = await readUntil(ended, () => false);
    expect(frames.map((f) => resultOf(f).task?.status?.state)).toEqual(['TASK_STATE_COMPLETED']);
  });

  it('holds a GetTask with A2A-Current-Generation until the task moves, and answers at the bound when it does not', async () => {
    const stream = await openSse(`${node.url}/`, rpc('SendStreamingMessage', message('poll me')), EXTENSION);
    runner.release(1);
    const first = await readUntil(stream, (frames) => frames.some((f) => chunkText(resultOf(f))));
    const taskId = taskIdOf(resultOf(first[0]));
    const seen = generationOf(resultOf(first.at(-1)!)) as number;
    const polled = post(`${node.url}/`, rpc('GetTask', { id: taskId }), {
      ...EXTENSION,
      'A2A-Current-Generation': String(seen),
    });
    // Held: the task moves only once the poll waits, and the poll answers with the move.
    await longPollWaiting(node.logger, taskId, seen);
    runner.release(1);
    const moved = await polled;
    expect(generationOf(moved.body.result)).toBe(seen + 1);

    const waited = Date.now();
    const still = await post(`${node.url}/`, rpc('GetTask', { id: taskId }), {
      ...EXTENSION,
      'A2A-Current-Generation': String(seen + 1),
    });
    expect(generationOf(still.body.result)).toBe(seen + 1);
    expect(Date.now() - waited).toBeGreaterThanOrEqual(350);

    const bad = await post(`${node.url}/`, rpc('GetTask', { id: taskId }), {
      ...EXTENSION,
      'A2A-Current-Generation': 'soon',
    });
    expect(bad.body.error).toMatchObject({ code: -32602 });
    expect(bad.body.error.message).toContain('A2A-Current-Generation');
    runner.release();
    await readUntil(stream, () => false);
  });
});

describe('sends that never run twice, and the generation precondition, on one node', () => {
  let node: A2ATestNode;
  let runner: PacedRunner;
  beforeEach(async () => {
    runner = new PacedRunner(3);
    node = await startA2ANode({ runner });
  });
  afterEach(async () => {
    runner.release();
    await node.close();
  });

  it('runs one turn for twenty identical sends in flight at once, and each gets the task, settled', async () => {
    const params = message('only once');
    const sends = Array.from({ length: 20 }, () => post(`${node.url}/`, rpc('SendMessage', params)));
    await waitFor(() => runner.turns.length > 0, 20_000, 'the first turn');
    runner.release();
    const answers = await Promise.all(sends);
    expect(runner.turns).toEqual(['only once']);
    expect(new Set(answers.map((a) => a.body.result.task.id)).size).toBe(1);
    expect(answers.every((a) => a.body.result.task.status.state === 'TASK_STATE_COMPLETED')).toBe(true);
    // A retry after the turn is over gets the same task, still without a second turn.
    const later = await post(`${node.url}/`, rpc('SendMessage', params));
    expect(later.body.result.task.id).toBe(answers[0].body.result.task.id);
    expect(runner.turns).toHaveLength(1);
  });

  it('runs a message that reuses an id for other words as its own send: only the same message is a retry', async () => {
    runner.release();
    const first = await post(
      `${node.url}/`,
      rpc('SendMessage', { message: { ...message('one').message, messageId: 'reused' } }),
    );
    const other = await post(
      `${node.url}/`,
      rpc('SendMessage', { message: { ...message('two').message, messageId: 'reused' } }),
    );
    expect(other.body.result.task.id).not.toBe(first.body.result.task.id);
    expect(runner.turns).toEqual(['one', 'two']);
  });

  it('treats sends with one Idempotency-Key as one, whatever their message ids; a streamed retry follows the task', async () => {
    runner.release();
    const key = { 'Idempotency-Key': 'order-42' };
    const first = await post(`${node.url}/`, rpc('SendMessage', message('pay once')), key);
    const again = await openSse(`${node.url}/`, rpc('SendStreamingMessage', message('pay once')), key);
    const frames = await readUntil(again, () => false);
    expect(frames.map((f) => taskIdOf(resultOf(f)))).toEqual([first.body.result.task.id]);
    expect(runner.turns).toEqual(['pay once']);
    const other = await post(`${node.url}/`, rpc('SendMessage', message('pay once')), {
      'Idempotency-Key': 'order-43',
    });
    expect(other.body.result.task.id).not.toBe(first.body.result.task.id);
    expect(runner.turns).toHaveLength(2);
  });

  it('wakes a long poll on a task waiting for its caller when any caller’s answer moves it, well before the bound', async () => {
    runner.release();
    const asked = await post(`${node.url}/`, rpc('SendMessage', message('ask me')), EXTENSION);
    const task = asked.body.result.task;
    const generation = generationOf(asked.body.result) as number;
    // The bound is a2a.longPollTimeout's default, 30 s: an answer before the test's own limit was woken.
    const polled = post(`${node.url}/`, rpc('GetTask', { id: task.id }), {
      ...EXTENSION,
      'A2A-Current-Generation': String(generation),
    });
    await longPollWaiting(node.logger, task.id, generation);
    // Answered by a caller that never asked for generations.
    const answer = message('the red one', { taskId: task.id, contextId: task.contextId });
    const answered = await post(`${node.url}/`, rpc('SendMessage', answer));
    expect(answered.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const moved = await polled;
    expect(generationOf(moved.body.result)).toBeGreaterThan(generation);
  });

  it('refuses a follow-up whose If-Generation-Match is stale: -32010 on JSON-RPC, 409 ABORTED on HTTP+JSON', async () => {
    runner.release();
    const asked = await post(`${node.url}/`, rpc('SendMessage', message('ask me')), EXTENSION);
    const task = asked.body.result.task;
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const generation = generationOf(asked.body.result) as number;
    const followUp = () => message('the blue one', { taskId: task.id, contextId: task.contextId });
    const stale = { ...EXTENSION, 'A2A-If-Generation-Match': String(generation - 1) };

    const refused = await post(`${node.url}/`, rpc('SendMessage', followUp()), stale);
    expect(refused.body.error).toMatchObject({ code: -32010 });
    expect(refused.body.error.message).toBe(
      `Task generation mismatch: expected ${generation - 1} but current generation is ${generation}`,
    );
    const rest = await post(`${node.url}/message:send`, followUp(), stale);
    expect(rest.status).toBe(409);
    expect(rest.body.error).toMatchObject({
      code: 409,
      status: 'ABORTED',
      details: [expect.objectContaining({ reason: 'TASK_GENERATION_MISMATCH', domain: 'a2a-protocol.org' })],
    });
    expect(runner.turns).toEqual(['ask me']);

    // The refused sends recorded no key: the same follow-up with the right generation runs.
    const matching = { ...EXTENSION, 'A2A-If-Generation-Match': String(generation) };
    const answered = await post(`${node.url}/`, rpc('SendMessage', followUp()), matching);
    expect(answered.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(generationOf(answered.body.result)).toBeGreaterThan(generation);
    expect(runner.turns).toEqual(['ask me', 'the blue one']);
  });
});

describe('the generation extension over gRPC', () => {
  let node: A2ATestNode;
  let runner: PacedRunner;
  beforeEach(async () => {
    runner = new PacedRunner(2);
    runner.release();
    node = await startA2ANode({ runner, grpc: true });
  });
  afterEach(() => node.close());

  it('resumes SubscribeToTask after last-event-id and carries generations, in gRPC metadata as in headers', async () => {
    const stream = await openSse(`${node.url}/`, rpc('SendStreamingMessage', message('watched')), EXTENSION);
    const frames = await readUntil(stream, () => false);
    const taskId = taskIdOf(resultOf(frames[0]));
    const resumed = await grpcCall(
      node.grpcAddress!,
      'SubscribeToTask',
      { id: taskId },
      { 'a2a-extensions': GENERATION_EXTENSION, 'last-event-id': `${taskId}:2` },
    );
    expect(resumed.error).toBeUndefined();
    const generations = (
      resumed.messages as Array<{ payload?: { value?: { metadata?: Record<string, unknown> } } }>
    ).map((m) => m.payload?.value?.metadata?.[GENERATION_METADATA_KEY]);
    expect(generations).toEqual(frames.slice(2).map((_, i) => i + 3));
  });

  it('refuses a stale A2A-If-Generation-Match with ABORTED and the ErrorInfo reason; the right one runs', async () => {
    const asked = await post(`${node.url}/`, rpc('SendMessage', message('ask me')), EXTENSION);
    const task = asked.body.result.task;
    const generation = generationOf(asked.body.result) as number;
    const followUp = () => message('the green one', { taskId: task.id, contextId: task.contextId });
    const metadata = (expected: number) => ({
      'a2a-extensions': GENERATION_EXTENSION,
      'a2a-if-generation-match': String(expected),
    });
    const refused = await grpcCall(node.grpcAddress!, 'SendMessage', followUp(), metadata(generation - 1));
    expect(refused.error?.code).toBe(grpc.status.ABORTED);
    const [blob] = refused.error!.metadata.get(GRPC_STATUS_DETAILS_BIN);
    const info = decodeStatus(blob as Buffer).details.find((d) => d.typeUrl.endsWith('google.rpc.ErrorInfo'));
    expect(info && decodeErrorInfo(info.value).reason).toBe('TASK_GENERATION_MISMATCH');
    const answered = await grpcCall(node.grpcAddress!, 'SendMessage', followUp(), metadata(generation));
    expect(answered.error).toBeUndefined();
    expect(runner.turns).toEqual(['ask me', 'the green one']);
  });
});
