import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GENERATION_EXTENSION, GENERATION_METADATA_KEY } from '../../src/protocol/generationExtension';
import { longPollWaiting } from '../support/longPoll';
import { skipWithoutPostgres } from '../support/prerequisites';
import { useReplicaCluster } from '../support/pgReplicas';
import { openSse, resultOf, rpc, type SseFrame } from '../support/sse';

/**
 * Streams that survive a dropped connection and sends that never run twice
 * across replicas (issue 27): replicas of one node on one throwaway
 * PostgreSQL database, in this process on 127.0.0.1, one scripted model,
 * reached over real sockets.
 */

const EXTENSION = { 'A2A-Extensions': GENERATION_EXTENSION };
const message = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { messageId: `m-${Math.random().toString(36).slice(2)}`, role: 'ROLE_USER', parts: [{ text }], ...extra },
});
const generationOf = (result: Record<string, any>): unknown =>
  (result.task ?? result.statusUpdate ?? result.artifactUpdate ?? result).metadata?.[GENERATION_METADATA_KEY];
const chunkText = (result: Record<string, any>): string =>
  (result.artifactUpdate?.artifact?.parts ?? []).map((p: { text?: string }) => p.text ?? '').join('');
const taskIdOf = (result: Record<string, any>): string =>
  result.task?.id ?? result.statusUpdate?.taskId ?? result.artifactUpdate?.taskId;
const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};
async function readUntil(stream: { next(): Promise<SseFrame | undefined> }, done: (frames: SseFrame[]) => boolean) {
  const frames: SseFrame[] = [];
  for (let frame = await stream.next(); frame; frame = await stream.next()) {
    frames.push(frame);
    if (done(frames)) break;
  }
  return frames;
}
/** Gates a scripted model's chunks: chunk `i` goes out once `open(i)` (or a later one) was called. */
function chunkGates() {
  let opened = -1;
  const waiting: Array<{ index: number; go: () => void }> = [];
  return {
    before: (index: number) =>
      index <= opened ? Promise.resolve() : new Promise<void>((go) => waiting.push({ index, go })),
    open(upTo: number) {
      opened = Math.max(opened, upTo);
      for (const w of waiting.splice(0))
        if (w.index <= opened) w.go();
        else waiting.push(w);
    },
  };
}

if (!skipWithoutPostgres('resumable streams and idempotent sends across replicas')) {
  describe('resumable streams and idempotent sends across three replicas on PostgreSQL', () => {
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-resume-'));
    const cluster = useReplicaCluster({
      config: {
        agent: { multiAgent: false },
        tools: { fs: { root: workspace } },
        a2a: { longPollTimeout: '2s' },
      },
    });
    afterAll(() => fs.rmSync(workspace, { recursive: true, force: true }));
    afterEach(() => expect(cluster().model.unexpected).toEqual([]));
    const lines = (file: string) =>
      fs.existsSync(path.join(workspace, file))
        ? fs.readFileSync(path.join(workspace, file), 'utf8').split('\n').filter(Boolean)
        : [];

    it('delivers chunks k+1..n exactly once when a stream cut on A after k of n is resumed through B', async () => {
      const [a, b] = cluster().nodes;
      const chunks = Array.from({ length: 12 }, (_, i) => `part${i + 1} `);
      const gates = chunkGates();
      cluster().model.push({ chunks, before: gates.before });
      const stream = await openSse(`${a.url}/`, rpc('SendStreamingMessage', message('tell me')), EXTENSION);
      const k = 5;
      gates.open(k - 1);
      const before = await readUntil(stream, (frames) => frames.filter((f) => chunkText(resultOf(f))).length === k);
      stream.cut();
      gates.open(k + 2); // two more are written while nobody reads
      const last = before.at(-1)!;
      const taskId = taskIdOf(resultOf(last));
      expect(last.id).toBe(`${taskId}:${generationOf(resultOf(last))}`);
      const resumed = await openSse(`${b.url}/`, rpc('SubscribeToTask', { id: taskId }), {
        ...EXTENSION,
        'Last-Event-ID': last.id!,
      });
      const first = await resumed.next();
      gates.open(chunks.length);
      const after = [first!, ...(await readUntil(resumed, () => false))];
      const texts = after.map((f) => chunkText(resultOf(f))).filter(Boolean);
      expect(texts).toEqual(chunks.slice(k));
      const answer = [...before, ...after].map((f) => chunkText(resultOf(f))).join('');
      expect(answer).toBe(chunks.join(''));
      const generations = [...before, ...after].map((f) => generationOf(resultOf(f)) as number);
      expect(generations).toEqual(generations.map((_, i) => generations[0] + i));
      expect(resultOf(after.at(-1)!).statusUpdate?.status?.state).toBe('TASK_STATE_COMPLETED');
    });

    it('runs one turn for 100 identical sends in flight at once over three replicas: the command runs once, one task', async () => {
      const file = 'hundred.txt';
      cluster().model.push(
        { toolCalls: [{ name: 'exec_shell', arguments: { command: `echo once >> ${file}` } }] },
        { text: 'Appended once.' },
      );
      const params = message(`append to ${file}`);
      const nodes = cluster().nodes;
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) => post(`${nodes[i % 3].url}/`, rpc('SendMessage', params))),
      );
      const ids = new Set(answers.map((r) => r.body.result?.task?.id));
      expect([...ids]).toHaveLength(1);
      expect(answers.every((r) => r.body.result?.task?.status?.state === 'TASK_STATE_COMPLETED')).toBe(true);
      expect(lines(file)).toEqual(['once']);
    });

    it('refuses through B a follow-up whose If-Generation-Match is stale for a task A ran: -32010, 409 over HTTP+JSON', async () => {
      const [a, b] = cluster().nodes;
      cluster().model.push({ text: 'Done.' });
      // The precondition is checked before the task's state: a finished task at another generation is a mismatch.
      const sent = await post(`${a.url}/`, rpc('SendMessage', message('first')), EXTENSION);
      const task = sent.body.result.task;
      const generation = generationOf(sent.body.result) as number;
      const stale = { ...EXTENSION, 'A2A-If-Generation-Match': String(generation - 1) };
      const followUp = () => message('next', { taskId: task.id, contextId: task.contextId });
      const refused = await post(`${b.url}/`, rpc('SendMessage', followUp()), stale);
      expect(refused.body.error?.code).toBe(-32010);
      const rest = await post(`${b.url}/message:send`, followUp(), stale);
      expect(rest.status).toBe(409);
      expect(rest.body.error?.status).toBe('ABORTED');
      // At the right generation the finished task refuses the follow-up as it always has.
      const right = { ...EXTENSION, 'A2A-If-Generation-Match': String(generation) };
      expect((await post(`${b.url}/`, rpc('SendMessage', followUp()), right)).body.error?.code).toBe(-32004);
    });

    it('holds a GetTask through C until the task streaming on A moves past the caller’s generation', async () => {
      const [a, , c] = cluster().nodes;
      const gates = chunkGates();
      cluster().model.push({ chunks: ['one ', 'two ', 'three'], before: gates.before });
      const stream = await openSse(`${a.url}/`, rpc('SendStreamingMessage', message('slowly')), EXTENSION);
      gates.open(0);
      const first = await readUntil(stream, (frames) => frames.some((f) => chunkText(resultOf(f))));
      const taskId = taskIdOf(resultOf(first[0]));
      const seen = generationOf(resultOf(first.at(-1)!)) as number;
      const polled = post(`${c.url}/`, rpc('GetTask', { id: taskId }), {
        ...EXTENSION,
        'A2A-Current-Generation': String(seen),
      });
      // C holds it: the task moves only once C's poll waits, and the poll answers with the move.
      await longPollWaiting(c.logger, taskId, seen);
      gates.open(1);
      const moved = await polled;
      expect(generationOf(moved.body.result)).toBeGreaterThan(seen);
      gates.open(2);
      await readUntil(stream, () => false);
    });
  });
}
