import { create, createFileRegistry, fromBinary, type DescMessage, type MessageInitShape } from '@bufbuild/protobuf';
import {
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  FieldDescriptorProtoSchema,
  FileDescriptorProtoSchema,
} from '@bufbuild/protobuf/wkt';

/**
 * The part of the OTLP trace wire format the tests read, declared here as
 * descriptors for @bufbuild/protobuf to decode with (the field numbers are
 * those of opentelemetry-proto's `collector/trace/v1/trace_service.proto`,
 * `trace/v1/trace.proto`, `resource/v1/resource.proto` and
 * `common/v1/common.proto`). Fields left out (events, links, timestamps…)
 * are kept as unknown fields and not read. Names are the tests' own: only
 * the numbers and types are on the wire.
 */
const field = (
  name: string,
  number: number,
  type: Type,
  extra: { repeated?: true; typeName?: string; oneofIndex?: number } = {},
): MessageInitShape<typeof FieldDescriptorProtoSchema> => ({
  name,
  number,
  type,
  label: extra.repeated ? Label.REPEATED : Label.OPTIONAL,
  ...(extra.typeName ? { typeName: `.otlp.${extra.typeName}` } : {}),
  ...(extra.oneofIndex !== undefined ? { oneofIndex: extra.oneofIndex } : {}),
});

const OTLP_TRACE_SUBSET = create(FileDescriptorProtoSchema, {
  name: 'lango_test_otlp_trace_subset.proto',
  package: 'otlp',
  syntax: 'proto3',
  messageType: [
    {
      name: 'ExportTraceServiceRequest',
      field: [field('resource_spans', 1, Type.MESSAGE, { repeated: true, typeName: 'ResourceSpans' })],
    },
    {
      name: 'ResourceSpans',
      field: [
        field('resource', 1, Type.MESSAGE, { typeName: 'Resource' }),
        field('scope_spans', 2, Type.MESSAGE, { repeated: true, typeName: 'ScopeSpans' }),
      ],
    },
    { name: 'Resource', field: [field('attributes', 1, Type.MESSAGE, { repeated: true, typeName: 'KeyValue' })] },
    {
      name: 'ScopeSpans',
      field: [
        field('scope', 1, Type.MESSAGE, { typeName: 'InstrumentationScope' }),
        field('spans', 2, Type.MESSAGE, { repeated: true, typeName: 'Span' }),
      ],
    },
    { name: 'InstrumentationScope', field: [field('name', 1, Type.STRING), field('version', 2, Type.STRING)] },
    {
      name: 'Span',
      field: [
        field('trace_id', 1, Type.BYTES),
        field('span_id', 2, Type.BYTES),
        field('parent_span_id', 4, Type.BYTES),
        field('name', 5, Type.STRING),
        field('kind', 6, Type.INT32),
        field('attributes', 9, Type.MESSAGE, { repeated: true, typeName: 'KeyValue' }),
      ],
    },
    {
      name: 'KeyValue',
      field: [field('key', 1, Type.STRING), field('value', 2, Type.MESSAGE, { typeName: 'AnyValue' })],
    },
    {
      name: 'AnyValue',
      oneofDecl: [{ name: 'value' }],
      field: [
        field('string_value', 1, Type.STRING, { oneofIndex: 0 }),
        field('bool_value', 2, Type.BOOL, { oneofIndex: 0 }),
        field('int_value', 3, Type.INT64, { oneofIndex: 0 }),
        field('double_value', 4, Type.DOUBLE, { oneofIndex: 0 }),
      ],
    },
  ],
});

const ExportTraceServiceRequest: DescMessage = createFileRegistry(OTLP_TRACE_SUBSET, () => undefined).getMessage(
  'otlp.ExportTraceServiceRequest',
)!;

/** One decoded attribute value: a string, boolean, number (int64 as number) or double. */
export type OtlpValue = string | boolean | number | undefined;

/** One exported span, with its resource's `service.name`; ids in lowercase hex ('' when absent). */
export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** The OTLP span kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, OtlpValue>;
  service: string;
  scope: string;
}

type KeyValue = { key: string; value?: { value: { case?: string; value?: unknown } } };
type Decoded = {
  resourceSpans: Array<{
    resource?: { attributes: KeyValue[] };
    scopeSpans: Array<{
      scope?: { name: string };
      spans: Array<{
        traceId: Uint8Array;
        spanId: Uint8Array;
        parentSpanId: Uint8Array;
        name: string;
        kind: number;
        attributes: KeyValue[];
      }>;
    }>;
  }>;
};

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const attributes = (list: KeyValue[]): Record<string, OtlpValue> =>
  Object.fromEntries(
    list.map(({ key, value }) => {
      const raw = value?.value.value;
      return [key, typeof raw === 'bigint' ? Number(raw) : (raw as OtlpValue)];
    }),
  );

/**
 * Decodes one OTLP/HTTP protobuf body (`application/x-protobuf`, an
 * ExportTraceServiceRequest) into its spans.
 * @example
 * const spans = decodeOtlpTraces(request.body);
 * expect(spans.find((s) => s.name === 'lango.turn')?.parentSpanId).toBe(requestSpan.spanId);
 */
export function decodeOtlpTraces(body: Uint8Array): DecodedSpan[] {
  const decoded = fromBinary(ExportTraceServiceRequest, body) as unknown as Decoded;
  return decoded.resourceSpans.flatMap((rs) => {
    const service = String(attributes(rs.resource?.attributes ?? [])['service.name'] ?? '');
    return rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((span) => ({
        traceId: hex(span.traceId),
        spanId: hex(span.spanId),
        parentSpanId: hex(span.parentSpanId),
        name: span.name,
        kind: span.kind,
        attributes: attributes(span.attributes),
        service,
        scope: ss.scope?.name ?? '',
      })),
    );
  });
}
