/**
 * The second baseline: Google ADK-JS's A2A server (`toA2a` from @google/adk)
 * around one `LlmAgent` whose model answers at once with a fixed text, so the
 * figures measure ADK's runner, session service and A2A surface and not a
 * model. ADK bundles @a2a-js/sdk 0.3, so it speaks v0.3 JSON-RPC
 * (`message/send`) at `/jsonrpc`.
 *
 * Prints `{"ready":true,"url":...}` on stdout once listening (url: the
 * JSON-RPC endpoint); SIGUSR2 (with --expose-gc) answers the memory probe.
 */
import type { AddressInfo } from 'node:net';
import { BaseLlm, LlmAgent, LogLevel, setLogLevel, toA2a } from '@google/adk';
import type { BaseLlmConnection, LlmRequest, LlmResponse } from '@google/adk';
import { answerMemoryProbe } from './memoryStats';

const PORT = Number(process.env.PORT ?? 0);

/** A model that answers every request with one complete text, without waiting. */
class InstantLlm extends BaseLlm {
  constructor() {
    super({ model: 'instant' });
  }

  async *generateContentAsync(_request: LlmRequest): AsyncGenerator<LlmResponse, void> {
    yield { content: { role: 'model', parts: [{ text: 'hello' }] }, turnComplete: true };
  }

  connect(): Promise<BaseLlmConnection> {
    return Promise.reject(new Error('the instant model has no live connection'));
  }
}

async function main(): Promise<void> {
  // ADK logs a warning per request on stdout by default ("Ignoring tool confirmation(s) delivered over A2A");
  // a served agent would quiet that, as the node runs at `warn` with nothing to log per request.
  setLogLevel(LogLevel.ERROR);
  const agent = new LlmAgent({
    name: 'baseline_agent',
    description: 'Answers hello at once.',
    instruction: 'Answer hello.',
    model: new InstantLlm(),
  });
  // Loopback-only benchmark server: the same no-authentication stance as the SDK baseline.
  const app = await toA2a(agent, { host: '127.0.0.1', port: PORT, allowUnauthenticated: true });
  answerMemoryProbe();
  const server = app.listen(PORT, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(
      `${JSON.stringify({ ready: true, url: `http://127.0.0.1:${port}`, rpcPath: '/jsonrpc', pid: process.pid })}\n`,
    );
  });
  process.once('SIGTERM', () => {
    // Idle keep-alive connections would hold close() open until the parent's 5 s SIGKILL.
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`ADK baseline failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
