import readline from 'node:readline';
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { assertNever, type RunEvent } from '../../agent/events';
import { runToEnd, type TurnResult } from '../../agent/turn';
import type { LangoApp } from '../../app';
import { OWNER } from '../../principal';
import { ExitCode, type CliIO } from '../io';
import { appFor, configFor, type CliContext, type GlobalOptions } from '../context';

/**
 * Renders a turn for a person: the answer streams as it is written, and each
 * change of acting agent, tool call and remote call is shown on its own line.
 */
export function createTurnRenderer(io: CliIO): { onEvent: (e: RunEvent) => void; end: (r: TurnResult) => void } {
  let midLine = false;
  // Providers that do not stream still end with a final event: print its text when nothing streamed.
  let streamed = false;
  const line = (text: string) => {
    if (midLine) io.out('\n');
    midLine = false;
    io.out(text + '\n');
  };
  return {
    onEvent(event) {
      switch (event.type) {
        case 'agent_start':
          streamed = false;
          line(`[${event.agent}]`);
          break;
        case 'text_delta':
          streamed = true;
          io.out(event.delta);
          midLine = !event.delta.endsWith('\n');
          break;
        case 'transfer':
          line(`→ ${event.from} transfers to ${event.to}`);
          break;
        case 'transfer_refused':
          line(`✗ transfer ${event.from} → ${event.to} refused: ${event.reason}`);
          break;
        case 'rejected':
          line(`↩ ${event.agent} rejected the task: ${event.note}`);
          break;
        case 'tool_start':
          line(`  ⚙ ${event.tool} …`);
          break;
        case 'tool_end':
          line(`  ⚙ ${event.tool} ${event.ok ? 'done' : 'failed'}: ${event.summary}`);
          break;
        case 'remote_call':
          line(`  ⇄ ${event.agent}: ${event.status}${event.detail ? ` (${event.detail})` : ''}`);
          break;
        case 'final':
          if (!streamed) line(event.text);
          break;
        case 'input_required':
          break;
        default:
          assertNever(event);
      }
    },
    end(result) {
      if (midLine) io.out('\n');
      midLine = false;
      if (result.status === 'failed') io.out(`✗ failed: ${result.text}\n`);
      else if (result.status === 'input-required') io.out(`? ${result.author} asks: ${result.text}\n`);
    },
  };
}

async function runTurn(
  app: LangoApp,
  io: CliIO,
  sessionId: string,
  text: string,
  signal: AbortSignal,
): Promise<TurnResult> {
  const renderer = createTurnRenderer(io);
  // The CLI is the node's owner.
  const result = await runToEnd(app.runner, { principal: OWNER, sessionId, text, signal }, renderer.onEvent);
  renderer.end(result);
  return result;
}

/** `lango chat [MESSAGE]`: one turn, or an interactive conversation when no message is given. */
export function registerChatCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  program
    .command('chat')
    .description('talk to the node: one message, or interactive when none is given')
    .argument('[message...]', 'the message (interactive when omitted)')
    .option('-s, --session <id>', 'continue a session (kept in the database)')
    .action(async (words: string[], options: { session?: string }) => {
      const { config } = configFor(program.opts<GlobalOptions>(), ctx);
      const app = await appFor(config, ctx);
      const sessionId = options.session ?? `cli:${randomUUID()}`;
      const abort = new AbortController();
      void ctx.stopSignal.then(() => abort.abort());
      try {
        if (words.length) {
          const result = await runTurn(app, ctx.io, sessionId, words.join(' '), abort.signal);
          done(result.status === 'failed' ? ExitCode.failure : ExitCode.ok);
          return;
        }
        ctx.io.err(`session ${sessionId} — type a message, or "exit" to leave\n`);
        const rl = readline.createInterface({ input: process.stdin, terminal: false });
        for await (const raw of rl) {
          const text = raw.trim();
          if (!text) continue;
          if (text === 'exit' || text === 'quit') break;
          await runTurn(app, ctx.io, sessionId, text, abort.signal);
        }
        rl.close();
        done(ExitCode.ok);
      } finally {
        await app.close();
      }
    });
}
