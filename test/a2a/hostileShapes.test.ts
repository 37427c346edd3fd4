import { BinaryReader, BinaryWriter } from '@bufbuild/protobuf/wire';
import * as grpc from '@grpc/grpc-js';
import { decodeStatus, GRPC_STATUS_DETAILS_BIN } from '@a2a-js/sdk/errors/grpc';
import type { ScriptedA2ARunner } from '../support/a2aRunner';
import { startA2ANode, type A2ATestNode } from '../support/a2aServer';
import { grpcCall, type GrpcAnswer } from '../support/grpcCall';

/**
 * Issue 37 §3: the JSON bindings' hostile shapes — depth, size, many fields,
 * huge strings and arrays, big metadata — sent on every binding by one
 * caller: each refused the same way (JSON-RPC -32602, HTTP 400, gRPC
 * INVALID_ARGUMENT, the same field and limit named; a body over the size
 * limit 413 / RESOURCE_EXHAUSTED) before the agent runs or anything is
 * stored, and every caller's reads (ListTasks, GetTask) answering after.
 */

const OWNER = 'owner-token';
const ALICE = 'alice-token';
const BOB = 'bob-token';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let node: A2ATestNode;
let bobTask = '';
beforeAll(async () => {
  node = await startA2ANode({
    grpc: true,
    config: {
      a2a: {
        auth: {
          callers: [
            { name: 'boss', bearerTokens: [OWNER], owner: true },
            { name: 'alice', bearerTokens: [ALICE] },
            { name: 'bob', bearerTokens: [BOB] },
          ],
        },
      },
    },
  });
  const sent = await grpcCall(node.grpcAddress!, 'SendMessage', message(), bearer(BOB));
  bobTask = taskIdOf(sent);
});
afterAll(() => node.close());

/** A v1.0 SendMessage's params with `fields` in its message. */
function message(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'hello' }], ...fields } };
}
/** A value nested `levels` deep (under 100 KB as JSON for any level this test uses). */
function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < levels; level++) value = { a: value };
  return value;
}
const taskIdOf = (answer: GrpcAnswer) =>
  (answer.messages[0] as { payload?: { value?: { id?: string } } } | undefined)?.payload?.value?.id ?? '';

/** One hostile shape: the SendMessage params, and the refusal every binding must give. */
interface Shape {
  what: string;
  params: () => Record<string, unknown>;
  /** The field and limit named, or `too large` for a body over the size limit. */
  refused: { field: string; says: RegExp } | 'too large';
}

const SHAPES: Shape[] = [
  {
    what: 'metadata nested 150 levels',
    params: () => message({ metadata: { x: nested(150) } }),
    refused: { field: 'message.metadata', says: /nests deeper than 100 levels/ },
  },
  {
    what: 'a data part nested 300 levels',
    params: () => message({ parts: [{ data: nested(300) }] }),
    refused: { field: 'message.parts[0].data', says: /nests deeper than 100 levels/ },
  },
  {
    what: 'a data part with 1,500 fields',
    params: () =>
      message({ parts: [{ data: Object.fromEntries(Array.from({ length: 1_500 }, (_, i) => [`f${i}`, i])) }] }),
    refused: { field: 'message.parts[0].data', says: /more than 1,000 fields/ },
  },
  {
    // Nulls: 4 bytes each in protobuf, 5 in JSON, so that the wire's size limit lets it through on every binding.
    what: 'an array of 12,000 items',
    params: () => message({ parts: [{ data: { values: Array(12_000).fill(null) } }] }),
    refused: { field: 'message.parts[0].data.values', says: /has 12,000 items; the limit is 10,000/ },
  },
  {
    what: 'a message id of 50,000 characters',
    params: () => message({ messageId: 'i'.repeat(50_000) }),
    refused: { field: 'message.messageId', says: /50,000 characters long; the limit is 4,096/ },
  },
  {
    what: 'a metadata string of 20,000 characters',
    params: () => message({ metadata: { note: 'n'.repeat(20_000) } }),
    refused: { field: 'message.metadata.note', says: /20,000 characters long/ },
  },
  {
    what: '40 KB of metadata in short strings',
    params: () =>
      message({ metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v'.repeat(2_000)])) }),
    refused: { field: 'message.metadata', says: /the limit is 16,384 for all of it/ },
  },
  {
    what: 'a text part of 200 KB',
    params: () => message({ parts: [{ text: 't'.repeat(200_000) }] }),
    refused: 'too large',
  },
];

/** `field` (wire type 2) holding `bytes`, in protobuf binary. */
const lengthDelimited = (field: number, bytes: Uint8Array) =>
  new BinaryWriter()
    .uint32((field << 3) | 2)
    .bytes(bytes)
    .finish();
const stringField = (field: number, text: string) =>
  new BinaryWriter()
    .uint32((field << 3) | 2)
    .string(text)
    .finish();
const joined = (...parts: Uint8Array[]) => Buffer.concat(parts.map((part) => Buffer.from(part)));

/** The bytes of a protobuf varint. */
const varint = (n: number) => new BinaryWriter().uint32(n).finish();

/**
 * A SendMessageRequest whose message's metadata nests `levels` deep, in protobuf binary: each level is
 * `Struct { fields = 1: { key = 1: "a", value = 2: Value { struct_value = 5: <the next level> } } }`, so the
 * message is every level's prefix, outermost first, then the leaf (`Value { string_value = 3 }`). Message
 * { message_id = 1; role = 4; parts = 5; metadata = 6 }, Part { text = 1 }, SendMessageRequest { message = 2 }.
 */
function deepMessageBytes(levels: number): Buffer {
  const leaf = stringField(3, 'leaf');
  // Inside out: the size of each level's Value, then its prefixes in order.
  const prefixes: Uint8Array[] = [];
  let valueSize = leaf.length;
  for (let level = 0; level < levels; level++) {
    const entrySize = 3 + 1 + varint(valueSize).length + valueSize;
    const structSize = 1 + varint(entrySize).length + entrySize;
    const entryPrefix = joined(varint(entrySize), Buffer.from([0x0a, 0x01, 0x61, 0x12]), varint(valueSize));
    // The outermost Struct is the metadata field itself, not a Value.
    const isOutermost = level === levels - 1;
    prefixes.push(
      isOutermost
        ? joined(Buffer.from([0x32]), varint(structSize), Buffer.from([0x0a]), entryPrefix)
        : joined(Buffer.from([0x2a]), varint(structSize), Buffer.from([0x0a]), entryPrefix),
    );
    valueSize = 1 + varint(structSize).length + structSize;
  }
  const metadata = joined(...prefixes.reverse(), leaf);
  const role = new BinaryWriter().uint32(32).int32(1).finish();
  const message = joined(stringField(1, `m-deep-${levels}`), role, lengthDelimited(5, stringField(1, 'hi')), metadata);
  return joined(lengthDelimited(2, message));
}

/** A unary call of raw bytes; resolves with its error (undefined: it succeeded). */
function rawGrpc(method: string, body: Buffer, metadata: grpc.Metadata): Promise<grpc.ServiceError | undefined> {
  const client = new grpc.Client(node.grpcAddress!, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      `/lf.a2a.v1.A2AService/${method}`,
      (value: Buffer) => value,
      (value: Buffer) => value,
      body,
      metadata,
      { deadline: Date.now() + 20_000 },
      (error) => {
        client.close();
        resolve(error ?? undefined);
      },
    );
  });
}

/** What a binding answered, in terms every binding shares. */
interface Refusal {
  kind: 'invalid params' | 'too large' | string;
  field?: string;
  message?: string;
}

async function overJsonRpc(params: Record<string, unknown>): Promise<Refusal> {
  const response = await fetch(`${node.url}/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...bearer(ALICE) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params }),
  });
  if (response.status === 413) return { kind: 'too large' };
  const { error } = (await response.json()) as { error?: { code: number; message: string; data?: unknown[] } };
  if (error?.code !== -32602) return { kind: `code ${error?.code ?? 'none'} (HTTP ${response.status})` };
  return { kind: 'invalid params', field: badRequestField(error.data ?? []), message: error.message };
}

async function overRest(params: Record<string, unknown>): Promise<Refusal> {
  const response = await fetch(`${node.url}/message:send`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...bearer(ALICE) },
    body: JSON.stringify(params),
  });
  if (response.status === 413) return { kind: 'too large' };
  if (response.status !== 400) return { kind: `HTTP ${response.status}` };
  const { error } = (await response.json()) as { error: { message: string; details?: unknown[] } };
  return { kind: 'invalid params', field: badRequestField(error.details ?? []), message: error.message };
}

async function overGrpc(params: Record<string, unknown>, method = 'SendMessage'): Promise<Refusal> {
  const answer = await grpcCall(node.grpcAddress!, method, params, bearer(ALICE));
  const error = answer.error;
  if (error?.code === grpc.status.RESOURCE_EXHAUSTED) return { kind: 'too large' };
  if (error?.code !== grpc.status.INVALID_ARGUMENT) return { kind: `gRPC ${error?.code ?? 'OK'}` };
  const [blob] = error.metadata.get(GRPC_STATUS_DETAILS_BIN);
  const detail = decodeStatus(blob as Buffer).details.find((d) => d.typeUrl.endsWith('google.rpc.BadRequest'));
  return { kind: 'invalid params', field: detail && grpcViolationField(detail.value), message: error.details };
}

/** The field of the `google.rpc.BadRequest` among JSON error details. */
function badRequestField(details: unknown[]): string | undefined {
  const badRequest = details.find(
    (d) => (d as Record<string, unknown>)['@type'] === 'type.googleapis.com/google.rpc.BadRequest',
  ) as { fieldViolations: Array<{ field: string }> } | undefined;
  return badRequest?.fieldViolations[0]?.field;
}

/** The first field violation's field of a `google.rpc.BadRequest` in protobuf binary. */
function grpcViolationField(bytes: Uint8Array): string | undefined {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 !== 1) {
      reader.skip(tag & 7);
      continue;
    }
    const violation = new BinaryReader(reader.bytes());
    while (violation.pos < violation.len) {
      const inner = violation.uint32();
      if (inner >>> 3 === 1) return violation.string();
      violation.skip(inner & 7);
    }
  }
  return undefined;
}

describe('hostile shapes on every binding', () => {
  it.each(SHAPES)('refuses $what the same way on JSON-RPC, HTTP+JSON and gRPC', async (shape) => {
    const runner = node.runner as ScriptedA2ARunner;
    const before = runner.calls.length;
    const answers = {
      jsonrpc: await overJsonRpc(shape.params()),
      rest: await overRest(shape.params()),
      grpc: await overGrpc(shape.params()),
    };
    if (shape.refused === 'too large') {
      expect(answers).toEqual({
        jsonrpc: { kind: 'too large' },
        rest: { kind: 'too large' },
        grpc: { kind: 'too large' },
      });
    } else {
      const { field, says } = shape.refused;
      const expected = { kind: 'invalid params', field, message: expect.stringMatching(says) };
      expect(answers).toEqual({ jsonrpc: expected, rest: expected, grpc: expected });
      // One decider: the very same words on each.
      expect(new Set(Object.values(answers).map((answer) => answer.message)).size).toBe(1);
    }
    expect(runner.calls.length).toBe(before);
  });

  it('refuses metadata nested 1,500 levels (the issue’s case, under 100 KB) on every binding, storing nothing', async () => {
    const runner = node.runner as ScriptedA2ARunner;
    const before = runner.calls.length;
    const params = message({ metadata: { x: nested(1_500) } });
    // Past 1,000 levels a JSON body is refused by the parsers' guard before the SDK's readers recurse into it.
    const guarded = {
      kind: 'invalid params',
      field: undefined,
      message: expect.stringMatching(/deeper than 1000 levels/),
    };
    expect(await overJsonRpc(params)).toEqual(guarded);
    expect(await overRest(params)).toEqual(guarded);
    // Protobuf decodes it (the SDK's client cannot encode it: its encoder recurses, so the bytes are written here).
    const metadata = new grpc.Metadata();
    metadata.set('authorization', bearer(ALICE).authorization);
    metadata.set('a2a-version', '1.0');
    const answer = await rawGrpc('SendMessage', deepMessageBytes(1_500), metadata);
    expect(answer?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(answer?.details).toBe('message.metadata: nests deeper than 100 levels');
    // Deeper than protobuf's reader recurses: refused as undecodable, after the credential step.
    const undecodable = await rawGrpc('SendMessage', deepMessageBytes(5_000), metadata);
    expect(undecodable?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(undecodable?.details).toMatch(/does not decode: it nests too deep/);
    expect(runner.calls.length).toBe(before);
  });

  it('refuses a hostile stream and a hostile push config the same way', async () => {
    const deep = message({ metadata: { x: nested(500) } });
    expect(await overGrpc(deep, 'SendStreamingMessage')).toEqual({
      kind: 'invalid params',
      field: 'message.metadata',
      message: 'message.metadata: nests deeper than 100 levels',
    });
    const hook = { taskId: bobTask, id: 'hook', url: `http://127.0.0.1:9/${'u'.repeat(5_000)}` };
    expect(await overGrpc(hook, 'CreateTaskPushNotificationConfig')).toMatchObject({
      kind: 'invalid params',
      field: 'url',
    });
  });

  it('stored nothing of them: every caller’s reads answer, over gRPC and JSON-RPC', async () => {
    for (const token of [OWNER, ALICE, BOB]) {
      const listed = await grpcCall(node.grpcAddress!, 'ListTasks', {}, bearer(token));
      expect({ token, error: listed.error?.message }).toEqual({ token, error: undefined });
      const rpc = await fetch(`${node.url}/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...bearer(token) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
      });
      expect((await rpc.json()) as unknown).toMatchObject({ result: { tasks: expect.any(Array) } });
    }
    const alices = await grpcCall(node.grpcAddress!, 'ListTasks', {}, bearer(ALICE));
    expect((alices.messages[0] as { tasks: unknown[] }).tasks).toEqual([]);
    const bobs = await grpcCall(node.grpcAddress!, 'GetTask', { id: bobTask }, bearer(BOB));
    expect(bobs.error).toBeUndefined();
    const owners = await grpcCall(node.grpcAddress!, 'GetTask', { id: bobTask }, bearer(OWNER));
    expect(owners.error).toBeUndefined();
  });
});
