import { SendMessageRequest, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { limitViolation, REQUEST_LIMITS, type RequestLimits } from '../../src/a2a/tasks/requestLimits';
import { LIST_PAGE_BYTES, READ_DEPTH, readableTask } from '../../src/a2a/tasks/readableTasks';

const LIMITS: RequestLimits = { ...REQUEST_LIMITS, maxBytes: 100 * 1024 };

/** A v1.0 SendMessage's params (ProtoJSON) with `fields` in its message. */
const params = (fields: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hello' }], ...fields },
  ...extra,
});
/** `json` as the JSON bindings decode it, and as the gRPC binding does (through protobuf and back). */
const decoded = (json: unknown) => {
  const fromJson = SendMessageRequest.fromJSON(json);
  const fromProto = A2AService.sendMessage.requestDeserialize(
    Buffer.from(A2AService.sendMessage.requestSerialize(fromJson)),
  );
  return { fromJson, fromProto };
};
/** A value nested `levels` deep: objects and arrays in turn, a string at the bottom. */
const nested = (levels: number): unknown => {
  let value: unknown = 'leaf';
  for (let level = 0; level < levels; level++) value = level % 2 === 0 ? { a: value } : [value];
  return value;
};
/** The violation of `json`'s decoded forms: the same whichever binding decoded it. */
const violationOf = (json: unknown, limits = LIMITS) => {
  const { fromJson, fromProto } = decoded(json);
  const violation = limitViolation(fromJson, limits);
  expect(limitViolation(fromProto, limits)).toEqual(violation);
  return violation;
};

describe('the limits every binding holds a decoded request to', () => {
  it('passes a greeting, a long text part and a long data part', () => {
    expect(violationOf(params())).toBeUndefined();
    expect(violationOf(params({ parts: [{ text: 'x'.repeat(90_000) }] }))).toBeUndefined();
    expect(violationOf(params({ parts: [{ data: { text: 'y'.repeat(50_000), list: [1, 2, 3] } }] }))).toBeUndefined();
  });

  it('counts depth from the params, as the JSON bindings always did, and names the field the caller set', () => {
    // params (1) → message (2) → metadata (3): 98 more levels inside it are 101.
    expect(violationOf(params({ metadata: { x: nested(97) } }))).toBeUndefined();
    expect(violationOf(params({ metadata: { x: nested(98) } }))).toEqual({
      field: 'message.metadata',
      description: 'nests deeper than 100 levels',
    });
    expect(violationOf(params({ parts: [{ data: nested(1_500) }] }))).toEqual({
      field: 'message.parts[0].data',
      description: 'nests deeper than 100 levels',
    });
  });

  it('refuses many fields, huge arrays and long strings outside a part’s content, naming each', () => {
    const fields = Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`k${i}`, i]));
    expect(violationOf(params({ parts: [{ data: fields }] }))).toEqual({
      field: 'message.parts[0].data',
      description: 'has more than 1,000 fields; the limit is 1,000',
    });
    expect(violationOf(params({ parts: [{ data: { values: Array(10_001).fill(0) } }] }))).toEqual({
      field: 'message.parts[0].data.values',
      description: 'has 10,001 items; the limit is 10,000',
    });
    expect(violationOf(params({ messageId: 'i'.repeat(5_000) }))).toEqual({
      field: 'message.messageId',
      description: 'is 5,000 characters long; the limit is 4,096',
    });
    expect(violationOf(params({ metadata: { 'odd key': 'n'.repeat(4_097) } }))).toEqual({
      field: 'message.metadata["odd key"]',
      description: 'is 4,097 characters long; the limit is 4,096',
    });
  });

  it('adds up every metadata of a request against one limit', () => {
    const half = { note: 'm'.repeat(4_000), more: 'm'.repeat(4_000) };
    expect(violationOf(params({ metadata: half }, { metadata: half }))).toBeUndefined();
    expect(
      violationOf(params({ metadata: half, parts: [{ text: 'hi', metadata: half }] }, { metadata: half })),
    ).toEqual({
      field: 'metadata',
      description: expect.stringMatching(
        /^brings the request's metadata to 24,\d{3} bytes as JSON; the limit is 16,384 for all of it$/,
      ),
    });
  });

  it('reads a key named $case inside caller JSON as a key, not as a oneof', () => {
    const metadata = { $case: 'text', value: nested(120) };
    expect(violationOf(params({ metadata }))).toEqual({
      field: 'message.metadata',
      description: 'nests deeper than 100 levels',
    });
  });

  it('sizes the decoded request as JSON: numbers as written, raw bytes as base64, defaults left out', () => {
    const small: RequestLimits = { ...LIMITS, maxBytes: 2_000 };
    // 300 numbers of 18 characters: about 5,700 bytes of JSON (2,700 of protobuf), past 2,000 by the 100th or so.
    expect(violationOf(params({ parts: [{ data: Array(300).fill(0.1234567890123456) }] }), small)).toEqual({
      field: expect.stringMatching(/^message\.parts\[0\]\.data\[(8\d|9\d|10\d)\]$/),
      description: 'takes the request past 2,000 bytes as JSON (a2a.maxBodyBytes)',
    });
    const raw = Buffer.alloc(1_600).toString('base64');
    expect(violationOf(params({ parts: [{ raw }] }), small)?.field).toBe('message.parts[0].raw');
    // A push config decoded with all its defaults is a few bytes.
    expect(limitViolation(TaskPushNotificationConfig.fromJSON({}), { ...LIMITS, maxBytes: 4 })).toBeUndefined();
  });
});

describe('stored tasks as reads answer them', () => {
  const task = (metadata: unknown) => ({
    id: 't-1',
    contextId: 'c-1',
    status: { state: 3, message: undefined, timestamp: '2026-01-01T00:00:00.000Z' },
    artifacts: [],
    history: [
      { messageId: 'm', contextId: '', taskId: '', role: 1, parts: [], metadata, extensions: [], referenceTaskIds: [] },
    ],
    metadata: undefined,
  });

  it('answers a task within the read depth as it is, and sizes it', () => {
    const within = task({ x: nested(READ_DEPTH - 10) }) as never;
    const read = readableTask(within);
    expect(read.task).toBe(within);
    expect(read.bytes).toBeGreaterThan(READ_DEPTH);
    expect(read.bytes).toBeLessThan(LIST_PAGE_BYTES);
  });

  it('answers a task stored before the limits with what nests too deep as null, the rest intact', () => {
    const deep = task({ kept: 'yes', x: nested(1_500) }) as never;
    const read = readableTask(deep);
    expect(read.task).not.toBe(deep);
    expect(JSON.stringify(read.task)).toContain('"kept":"yes"');
    expect(JSON.stringify(read.task)).toContain('null');
    expect(readableTask(read.task).task).toBe(read.task);
  });
});
