import fs from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {
  AgentCard,
  Extensions,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { A2AError, RequestMalformedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import {
  decodeErrorInfo,
  decodeStatus,
  encodeGrpcStatusDetails,
  GRPC_STATUS_DETAILS_BIN,
  grpcStatusFor,
} from '@a2a-js/sdk/errors/grpc';
import {
  defaultServerCallContextBuilder,
  JsonRpcTransportHandler,
  UnauthenticatedUser,
  validateVersion,
} from '@a2a-js/sdk/server';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { STREAMED_METHODS, UNARY_METHODS } from '../../src/a2a/bindings/grpcService';
import { JSON_RPC_METHODS } from '../../src/a2a/bindings/jsonRpcMethods';
import { grpcStatusOf } from '../../src/a2a/bindings/grpcStatus';

/**
 * The entry points of `@a2a-js/sdk` the node relies on (issue 37 §4): the
 * node uses the SDK through its public API only, and where it owns a piece
 * (the gRPC service, the v1.0 JSON-RPC binding) it builds it from these. An
 * SDK release that renames, drops or changes one fails here, loudly, not in
 * a caller's request.
 */

const SRC = path.resolve(__dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Every value `src/` imports from the SDK (type-only imports left out), by module. */
function importedValues(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const statement = /import\s+(type\s+)?\{([^}]*)\}\s*from\s*'(@a2a-js\/sdk[^']*)'/g;
  for (const file of sourceFiles(SRC)) {
    for (const [, typeOnly, names, module] of fs.readFileSync(file, 'utf8').matchAll(statement)) {
      if (typeOnly) continue;
      for (const specifier of names!.split(',').map((name) => name.trim())) {
        if (specifier === '' || specifier.startsWith('type ')) continue;
        const name = specifier.split(/\s+as\s+/)[0]!;
        if (!found.has(module!)) found.set(module!, new Set());
        found.get(module!)!.add(name);
      }
    }
  }
  return found;
}

describe('the SDK entry points the node relies on', () => {
  it('exports every value src/ imports from it', () => {
    const imported = importedValues();
    expect(imported.size).toBeGreaterThan(5);
    const missing: string[] = [];
    for (const [module, names] of imported) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const exports = require(module) as Record<string, unknown>;
      for (const name of names) if (exports[name] === undefined) missing.push(`${module}: ${name}`);
    }
    expect(missing).toEqual([]);
  });

  it('defines lf.a2a.v1.A2AService with the methods the node’s gRPC service answers, and their codecs', () => {
    const answered = [...Object.keys(UNARY_METHODS), ...Object.keys(STREAMED_METHODS)].sort();
    expect(Object.keys(A2AService).sort()).toEqual(answered);
    for (const [key, method] of Object.entries(A2AService)) {
      const name = key[0]!.toUpperCase() + key.slice(1);
      expect({ key, path: method.path, streamed: method.responseStream }).toEqual({
        key,
        path: `/lf.a2a.v1.A2AService/${name}`,
        streamed: key in STREAMED_METHODS,
      });
    }
    const request = SendMessageRequest.fromJSON({
      tenant: 'acme',
      message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }], metadata: { a: [1, { b: null }] } },
    });
    const decoded = A2AService.sendMessage.requestDeserialize(
      Buffer.from(A2AService.sendMessage.requestSerialize(request)),
    );
    expect(decoded).toEqual(request);
    expect(decoded.message?.parts[0]?.content).toEqual({ $case: 'text', value: 'hi' });
  });

  it('reads and writes ProtoJSON as the node’s JSON-RPC method table uses it', () => {
    expect([...JSON_RPC_METHODS.keys()].sort()).toEqual(
      Object.values(A2AService)
        .map((method) => method.path.slice(method.path.lastIndexOf('/') + 1))
        .sort(),
    );
    const task = Task.fromJSON({ id: 't', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } });
    expect(Task.toJSON(task)).toMatchObject({ id: 't', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } });
    expect('messageId' in task).toBe(false);
    const message = Message.fromJSON({ messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'ok' }] });
    expect('messageId' in message).toBe(true);
    expect(StreamResponse.toJSON({ payload: { $case: 'task', value: task } })).toEqual({ task: Task.toJSON(task) });
    expect(ListTasksResponse.toJSON({ tasks: [], nextPageToken: '', pageSize: 0, totalSize: 0 })).toEqual({});
    expect(TaskPushNotificationConfig.fromJSON({ taskId: 't', url: 'http://x/' })).toMatchObject({ url: 'http://x/' });
    expect(AgentCard.toJSON(AgentCard.fromJSON({ name: 'n' }))).toMatchObject({ name: 'n' });
  });

  it('builds the call context and checks the version as the bindings build and check them', () => {
    const user = new UnauthenticatedUser();
    const context = defaultServerCallContextBuilder({
      extensions: Extensions.parseServiceParameter('urn:a, urn:b,urn:a'),
      user,
      headers: { host: 'x' },
      requestedVersion: '1.0',
      tenant: 'acme',
    });
    expect(context.requestedExtensions).toEqual(['urn:a', 'urn:b']);
    expect(context.user).toBe(user);
    expect(context.tenant).toBe('acme');
    expect(context.requestedVersion).toBe('1.0');
    // No A2A-Version is v0.3 (§3.2.5).
    expect(defaultServerCallContextBuilder({ extensions: [], user, headers: {} }).requestedVersion).toBe('0.3');
    const card = AgentCard.fromJSON({
      supportedInterfaces: [{ url: 'grpc://x', protocolBinding: 'GRPC', protocolVersion: '1.0' }],
    });
    expect(() => validateVersion('1.0', card, 'GRPC')).not.toThrow();
    expect(() => validateVersion('9.9', card, 'GRPC')).toThrow(A2AError);
  });

  it('maps errors to codes and details as the node answers them on each binding', () => {
    const notFound = new TaskNotFoundError('no such task');
    expect(notFound.reason).toBe('TASK_NOT_FOUND');
    expect(JsonRpcTransportHandler.mapToJSONRPCError(notFound)).toMatchObject({ code: -32001 });
    expect(JsonRpcTransportHandler.mapToJSONRPCError(new Error('boom'))).toEqual({ code: -32603, message: 'boom' });
    expect(LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(notFound)).toMatchObject({ code: -32001 });
    expect(typeof new LegacyJsonRpcTransportHandler({} as never).handle).toBe('function');
    expect(grpcStatusFor(notFound)).toBe(grpc.status.NOT_FOUND);
    const malformed = new RequestMalformedError({ message: 'x: bad', metadata: { field: 'x' } });
    expect(malformed.toErrorInfo()).toMatchObject({ reason: 'INVALID_PARAMS', metadata: { field: 'x' } });
    expect(grpcStatusFor(malformed)).toBe(grpc.status.INVALID_ARGUMENT);
    const blob = encodeGrpcStatusDetails(grpc.status.INVALID_ARGUMENT, 'x: bad', 'INVALID_PARAMS', { field: 'x' });
    const status = decodeStatus(blob);
    expect(status).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, message: 'x: bad' });
    expect(decodeErrorInfo(status.details[0]!.value)).toMatchObject({
      reason: 'INVALID_PARAMS',
      metadata: { field: 'x' },
    });
    // The node's status: ErrorInfo and the BadRequest naming the field.
    const answered = grpcStatusOf(malformed);
    const details = decodeStatus(answered.metadata!.get(GRPC_STATUS_DETAILS_BIN)[0] as Buffer).details;
    expect(details.map((detail) => detail.typeUrl)).toEqual([
      'type.googleapis.com/google.rpc.ErrorInfo',
      'type.googleapis.com/google.rpc.BadRequest',
    ]);
  });
});
