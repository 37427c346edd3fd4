import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted OpenAI-compatible embeddings server on 127.0.0.1, port 0.
 * Its "model" is a small concept table: every word that names a concept
 * adds to that concept's dimension, so synonyms ("car", "automobile") land
 * on the same axis. That makes retrieval by meaning testable without a real
 * model, through the real `openai` client.
 */
export interface EmbeddingsServer {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  /** Every request body received, in order. */
  requests: { model: string; input: string[]; headers: http.IncomingHttpHeaders }[];
  /** Makes the next `count` requests fail with HTTP `status`. */
  failNext(count: number, status?: number): void;
  /**
   * Holds every response until `release` is called (to show work happens off
   * a tool's path); `arrived` resolves once a request is being held.
   */
  hold(): { release: () => void; arrived: Promise<void> };
  close(): Promise<void>;
}

/** Concepts of the scripted model: the words that mean each of them. */
export const CONCEPTS: string[][] = [
  ['car', 'cars', 'automobile', 'automobiles', 'vehicle', 'vehicles', 'sedan'],
  ['doctor', 'physician', 'medic', 'clinician'],
  ['happy', 'glad', 'joyful', 'cheerful'],
  ['database', 'sqlite', 'postgres', 'datastore'],
  ['fast', 'quick', 'speedy', 'rapid'],
  ['cat', 'kitten', 'feline'],
  ['money', 'cash', 'funds', 'payment'],
  ['weather', 'forecast', 'rain', 'sunny'],
];

/** The scripted model: a concept-count vector (unnormalised, as some servers send). */
export function conceptVector(text: string, dimensions = CONCEPTS.length + 1): number[] {
  const v = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const concept = CONCEPTS.findIndex((words) => words.includes(word));
    v[concept >= 0 ? concept : dimensions - 1] += concept >= 0 ? 3 : 0.1;
  }
  return v;
}

/** Starts the server; `apiKey` set means requests without `Authorization: Bearer <apiKey>` get 401. */
export async function startEmbeddingsServer(options: { apiKey?: string } = {}): Promise<EmbeddingsServer> {
  const requests: EmbeddingsServer['requests'] = [];
  let failures: { count: number; status: number } = { count: 0, status: 500 };
  let gate: Promise<void> | undefined;
  let onHeld: (() => void) | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') return send(404, { error: { message: 'not found' } });
      if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        return send(401, { error: { message: 'bad key', type: 'invalid_request_error' } });
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; input: string | string[] };
      const input = Array.isArray(body.input) ? body.input : [body.input];
      requests.push({ model: body.model, input, headers: req.headers });
      if (gate) {
        onHeld?.();
        await gate;
      }
      if (failures.count > 0) {
        failures.count--;
        return send(failures.status, { error: { message: 'scripted failure', type: 'server_error' } });
      }
      // Answer out of order: clients must sort by `index`.
      const data = input
        .map((text, index) => ({ object: 'embedding', index, embedding: conceptVector(text) }))
        .reverse();
      send(200, { object: 'list', model: body.model, data, usage: { prompt_tokens: 1, total_tokens: 1 } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    failNext: (count, status = 500) => {
      failures = { count, status };
    },
    hold: () => {
      let release!: () => void;
      gate = new Promise<void>((resolve) => (release = resolve));
      const arrived = new Promise<void>((resolve) => (onHeld = resolve));
      return {
        arrived,
        release: () => {
          gate = undefined;
          release();
        },
      };
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
