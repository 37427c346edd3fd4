import { TaskState, type StreamResponse, type TaskArtifactUpdateEvent } from '@a2a-js/sdk';
import { NodeConversation } from '../../src/cli/nodeClient';
import { a2aClient, answerText, asTask, partsText, textRequest, type Binding } from '../support/a2aClient';
import type { OpenAIServer } from '../support/openaiServer';
import { startScriptedNode, type ScriptedNode } from '../support/scriptedNode';

/** A promise the test resolves when it sees something, failing with `what` if that takes longer than 5 s. */
function signal(what: string): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`timed out waiting for ${what}`)), 20_000);
    resolve = () => {
      clearTimeout(timer);
      done();
    };
  });
  promise.catch(() => {});
  return { promise, resolve };
}

/** Artifact chunks as [text, append, lastChunk]. */
const chunksOf = (events: StreamResponse[]) =>
  events.flatMap((e) => (e.payload?.$case === 'artifactUpdate' ? [e.payload.value] : []));
const described = (chunks: TaskArtifactUpdateEvent[]) =>
  chunks.map((c) => [partsText(c.artifact?.parts), c.append, c.lastChunk]);
/** What a client that applies the chunks by the spec's rules (append or start over) ends up with. */
const applied = (chunks: TaskArtifactUpdateEvent[]) =>
  chunks.reduce((text, c) => (c.append ? text : '') + partsText(c.artifact?.parts), '');

/**
 * Issue 12: the answering agent's text reaches a streaming caller as it is
 * generated, as `artifact-update` chunks, through the real `openai` client
 * reading a scripted OpenAI-compatible stream that holds each chunk until
 * the caller has seen the one before.
 */
describe.each<Binding>(['JSONRPC', 'HTTP+JSON'])('the streamed answer over %s', (binding) => {
  let node: ScriptedNode;
  let model: OpenAIServer;
  let url: string;

  beforeEach(async () => {
    node = await startScriptedNode({ apiKey: 'sk-stream' });
    ({ model, url } = node);
  });

  afterEach(() => node.close());

  it('delivers each text delta before the model produces the next one; the artifact equals their concatenation', async () => {
    const pieces = ['The answer', ' is', ' 42.'];
    const seen = pieces.map((_, i) => signal(`the caller to see chunk ${i}`));
    model.push({ chunks: pieces, before: async (i) => (i === 0 ? undefined : seen[i - 1]!.promise) });
    const client = await a2aClient(url, binding);
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(textRequest('what is the answer?'))) {
      events.push(event);
      const chunks = chunksOf(events);
      if (event.payload?.$case === 'artifactUpdate') seen[chunks.length - 1]?.resolve();
    }
    const chunks = chunksOf(events);
    expect(described(chunks)).toEqual([
      ['The answer', false, false],
      [' is', true, false],
      [' 42.', true, false],
      ['', true, true],
    ]);
    const last = events.at(-1)?.payload;
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const stored = await client.getTask({ tenant: '', id: chunks[0]!.taskId, historyLength: 0 });
    expect(answerText(stored)).toBe('The answer is 42.');
    expect(applied(chunks)).toBe('The answer is 42.');
  });

  it('does not keep commentary streamed before a delegation in the answer', async () => {
    model.push(
      {
        toolCalls: [{ name: 'transfer_to_agent', arguments: { agent_name: 'operator' } }],
        text: 'Asking the operator.',
      },
      { chunks: ['Done', ': 3 files.'] },
    );
    const client = await a2aClient(url, binding);
    const chunks: TaskArtifactUpdateEvent[] = [];
    for await (const event of client.sendMessageStream(textRequest('count my files'))) {
      if (event.payload?.$case === 'artifactUpdate') chunks.push(event.payload.value);
    }
    expect(described(chunks)).toEqual([
      ['Asking the operator.', false, false],
      ['Done', false, false],
      [': 3 files.', true, false],
      ['', true, true],
    ]);
    expect(applied(chunks)).toBe('Done: 3 files.');
    const stored = await client.getTask({ tenant: '', id: chunks[0]!.taskId, historyLength: 0 });
    expect(answerText(stored)).toBe('Done: 3 files.');
    expect(chunks.every((c) => c.artifact?.metadata?.agent)).toBe(true);
  });

  it('delivers the deltas to a caller who subscribes to the running task', async () => {
    const subscribed = signal('the subscriber to receive the task');
    const first = signal('the subscriber to see the first chunk');
    model.push({
      chunks: ['Hello', ' again'],
      before: async (i) => (i === 0 ? subscribed.promise : first.promise),
    });
    const client = await a2aClient(url, binding);
    const task = asTask(await client.sendMessage(textRequest('greet me', {}, { returnImmediately: true })));
    const events: StreamResponse[] = [];
    for await (const event of client.resubscribeTask({ tenant: '', id: task.id })) {
      events.push(event);
      if (events.length === 1) subscribed.resolve();
      if (event.payload?.$case === 'artifactUpdate') first.resolve();
    }
    const chunks = chunksOf(events);
    expect(described(chunks)).toEqual([
      ['Hello', false, false],
      [' again', true, false],
      ['', true, true],
    ]);
    const stored = await client.getTask({ tenant: '', id: task.id, historyLength: 0 });
    expect(stored.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(stored)).toBe('Hello again');
  });

  it("gives the CLI's conversation with the node the whole streamed answer once", async () => {
    model.push({ chunks: ['Streamed', ' to', ' the CLI.'] });
    const conversation = await NodeConversation.connect(url);
    const answers: string[] = [];
    const outcome = await conversation.turn('hello', new AbortController().signal, (event) => {
      if (event.type === 'answer') answers.push(event.text);
    });
    expect(outcome).toBe('completed');
    expect(answers).toEqual(['Streamed to the CLI.']);
  });

  it('leaves the blocking call as it was: one artifact, one part, the whole answer', async () => {
    model.push({ chunks: ['one', ' two', ' three'] });
    const client = await a2aClient(url, binding);
    const task = asTask(await client.sendMessage(textRequest('count to three')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts).toHaveLength(1);
    expect(task.artifacts[0]!.parts).toHaveLength(1);
    expect(answerText(task)).toBe('one two three');
  });
});
