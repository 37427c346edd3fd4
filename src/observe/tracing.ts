import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { RequestIntercept } from '../a2a/bindings/inbound';
import { TRACEPARENT_KEY } from '../log/traceContext';
import type { ObservedAttributes, ObservedKind, Observation, Observer } from '../observation/observer';

/** Where and how spans go: `observability.otlp` with an endpoint set. */
export interface TracingOptions {
  /** The OTLP/HTTP traces URL (`…/v1/traces`). */
  tracesEndpoint: string;
  protocol: 'http/protobuf' | 'http/json';
  headers: Record<string, string>;
  serviceName: string;
  /** Masks secret values in span status messages. */
  redact: (text: string) => string;
}

/** The OpenTelemetry sink: spans for A2A requests, turns and their steps, exported over OTLP. */
export interface NodeTracing {
  readonly observer: Observer;
  /** Opens a server span per request, parented by the inbound `traceparent`; the turn it serves nests under it. */
  readonly traceRequests: RequestIntercept;
  /** Exports what is left and stops. */
  close(): Promise<void>;
}

const propagator = new W3CTraceContextPropagator();
const headerGetter = {
  keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
  get: (carrier: Record<string, unknown>, key: string) => {
    const value = carrier[key];
    return typeof value === 'string' || Array.isArray(value) ? (value as string | string[]) : undefined;
  },
};

/** Span names and attributes of each kind of step: OpenTelemetry GenAI semantic conventions where they exist. */
function describe(
  kind: ObservedKind,
  name: string,
  seen: ObservedAttributes,
): { name: string; attributes: Attributes } {
  const agent = typeof seen.agent === 'string' ? { 'gen_ai.agent.name': seen.agent } : {};
  switch (kind) {
    case 'turn': {
      const attributes: Attributes = {};
      for (const key of ['caller', 'sessionId', 'taskId'] as const)
        if (typeof seen[key] === 'string') attributes[`lango.${key}`] = seen[key];
      return { name: 'lango.turn', attributes };
    }
    case 'agent':
      return {
        name: `invoke_agent ${name}`,
        attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': name },
      };
    case 'model':
      return {
        name: `chat ${name}`,
        attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': name, ...agent },
      };
    case 'tool':
      return {
        name: `execute_tool ${name}`,
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, ...agent },
      };
    case 'transfer':
      return {
        name: `transfer_to_agent ${name}`,
        attributes: { 'lango.transfer.from': String(seen.from ?? ''), 'lango.transfer.to': name },
      };
    case 'remote':
      return { name: `remote_call ${name}`, attributes: { 'lango.peer': name, ...agent } };
  }
}

/** What became known while a step ran, as span attributes (never arguments or results: they may hold secrets). */
function laterAttributes(kind: ObservedKind, seen: ObservedAttributes): Attributes {
  switch (kind) {
    case 'model':
      return {
        'gen_ai.usage.input_tokens': Number(seen.inputTokens ?? 0),
        'gen_ai.usage.output_tokens': Number(seen.outputTokens ?? 0),
      };
    case 'remote':
      return {
        ...(typeof seen.hops === 'number' ? { 'lango.federation.hops': seen.hops } : {}),
        ...(typeof seen.status === 'string' ? { 'lango.remote.status': seen.status } : {}),
      };
    case 'turn':
      return {
        ...(typeof seen.status === 'string' ? { 'lango.turn.status': seen.status } : {}),
        ...(typeof seen.agent === 'string' ? { 'gen_ai.agent.name': seen.agent } : {}),
      };
    default:
      return {};
  }
}

/**
 * Builds the tracer: its own provider (never the global one, so two nodes in
 * one process export apart), a batch processor and the OTLP/HTTP exporter for
 * the configured protocol. Contexts are passed explicitly; the only implicit
 * one is the request span a turn nests under, held per request.
 * @example
 * const tracing = createNodeTracing({ tracesEndpoint: 'http://127.0.0.1:4318/v1/traces', protocol: 'http/json', headers: {}, serviceName: 'lango', redact });
 */
export function createNodeTracing(options: TracingOptions): NodeTracing {
  const exporterOptions = { url: options.tracesEndpoint, headers: options.headers };
  const exporter =
    options.protocol === 'http/json'
      ? new OTLPJsonTraceExporter(exporterOptions)
      : new OTLPProtobufTraceExporter(exporterOptions);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': options.serviceName,
      // Each process is its own instance, so two nodes of one service tell apart.
      'service.instance.id': randomUUID(),
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  const tracer: Tracer = provider.getTracer('lango');
  /** The server span of the request being served, for the turn it starts. */
  const requestSpan = new AsyncLocalStorage<Span>();

  return {
    observer: {
      active: true,
      turn: (start) => {
        const serving = requestSpan.getStore();
        const parent = serving
          ? trace.setSpan(ROOT_CONTEXT, serving)
          : propagator.extract(ROOT_CONTEXT, { [TRACEPARENT_KEY]: start.traceparent }, headerGetter);
        return SpanObservation.start(tracer, options.redact, 'turn', 'turn', parent, {
          caller: start.caller,
          sessionId: start.sessionId,
          taskId: start.taskId,
        });
      },
      storeWrite: () => {},
      storeNotification: () => {},
    },
    traceRequests: (call, next) => {
      const parent = propagator.extract(ROOT_CONTEXT, call.headers, headerGetter);
      const span = tracer.startSpan(
        `A2A ${call.method}`,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': call.method } },
        parent,
      );
      call.onAnswered((status) => {
        span.updateName(`A2A ${call.name}`);
        span.setAttributes({ 'rpc.method': call.name, 'http.response.status_code': status });
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
      return requestSpan.run(span, next);
    },
    close: () => provider.shutdown(),
  };
}

/**
 * One span being recorded. A class, not a literal of closures: an open
 * stream holds one per step while it runs.
 */
class SpanObservation implements Observation {
  private ended = false;

  private constructor(
    private readonly tracer: Tracer,
    private readonly redact: (text: string) => string,
    private readonly kind: ObservedKind,
    private readonly span: Span,
    /** The span's context: its children's parent. */
    private readonly context: Context,
    private readonly seen: ObservedAttributes,
  ) {}

  static start(
    tracer: Tracer,
    redact: (text: string) => string,
    kind: ObservedKind,
    name: string,
    parent: Context,
    attributes: ObservedAttributes = {},
  ): SpanObservation {
    const seen = { ...attributes };
    const described = describe(kind, name, seen);
    const span = tracer.startSpan(
      described.name,
      { kind: kind === 'remote' ? SpanKind.CLIENT : SpanKind.INTERNAL, attributes: described.attributes },
      parent,
    );
    return new SpanObservation(tracer, redact, kind, span, trace.setSpan(parent, span), seen);
  }

  child(kind: ObservedKind, name: string, attributes?: ObservedAttributes): Observation {
    return SpanObservation.start(this.tracer, this.redact, kind, name, this.context, attributes);
  }

  set(more: ObservedAttributes): void {
    Object.assign(this.seen, more);
  }

  end(error?: string): void {
    if (this.ended) return;
    this.ended = true;
    this.span.setAttributes(laterAttributes(this.kind, this.seen));
    if (error) this.span.setStatus({ code: SpanStatusCode.ERROR, message: this.redact(error).slice(0, 500) });
    this.span.end();
  }

  traceparent(): string | undefined {
    const carrier: Record<string, string> = {};
    propagator.inject(this.context, carrier, { set: (c, k, v) => (c[k] = v) });
    return carrier[TRACEPARENT_KEY];
  }
}
