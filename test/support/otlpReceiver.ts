import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One exported span as OTLP/JSON carries it, with its service's name. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: number | string } }>;
  service: string;
}

/**
 * A real OTLP/HTTP receiver on loopback: keeps each request's content type and body, and reads the spans of
 * OTLP/JSON requests.
 */
export async function otlpReceiver() {
  const requests: Array<{ path: string; contentType: string; body: Buffer }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        path: req.url ?? '',
        contentType: req.headers['content-type'] ?? '',
        body: Buffer.concat(chunks),
      });
      res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/json' });
      res.end(req.headers['content-type']?.includes('json') ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    /** Every span of every OTLP/JSON request, with its service name. */
    spans(): OtlpSpan[] {
      return requests
        .filter((r) => r.contentType.includes('json'))
        .flatMap((r) => {
          const body = JSON.parse(r.body.toString('utf8')) as {
            resourceSpans: Array<{
              resource: { attributes: OtlpSpan['attributes'] };
              scopeSpans: Array<{ spans: Omit<OtlpSpan, 'service'>[] }>;
            }>;
          };
          return body.resourceSpans.flatMap((rs) => {
            const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
            return rs.scopeSpans.flatMap((ss) => ss.spans.map((span) => ({ ...span, service })));
          });
        });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A span attribute's value (a string, or an int as a number). */
export const spanAttribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue !== undefined ? Number(value.intValue) : undefined);
};
