import { errorMessage } from '../../errors';
import readline from 'node:readline';
import { randomUUID } from 'node:crypto';
import type { LangoApp } from '../../app';
import type { ChatEvent, ChatOutcome, ChatRenderer } from '../chatEvents';
import { targetFor, type CliContext } from '../context';
import type { CommandRun } from '../commandRun';
import { describeHolder, type LockHolder } from '../../serve/dataLock';
import { newContextId } from '../../a2a/tasks/contextIds';
import { ONE_SHOT_SESSION_PREFIX } from '../../observe/consoleConversations';
import { ExitCode } from '../io';
import type { NodeConversation } from '../nodeClient';

/** One conversation, on the node over A2A or in this process; each turn relays chat events. */
interface Conversation {
  /** Where the turns run, for the greeting line. */
  readonly where: string;
  turn(text: string, signal: AbortSignal, onEvent: (event: ChatEvent) => void): Promise<ChatOutcome>;
}

/** Turns in this process, as the node's owner, in session `sessionId`. */
async function localConversation(app: LangoApp, sessionId: string): Promise<Conversation> {
  const [{ runToEnd }, { OWNER }, { chatEventOf }] = await Promise.all([
    import('../../agent/turn'),
    import('../../principal'),
    import('../chatEvents'),
  ]);
  return {
    where: `in this process (data folder ${app.dataDir})`,
    async turn(text, signal, onEvent) {
      try {
        const result = await runToEnd(app.runner, { principal: OWNER, sessionId, text, signal }, (event) => {
          const shown = chatEventOf(event);
          if (shown) onEvent(shown);
        });
        if (result.status === 'failed') onEvent({ type: 'failed', text: result.text });
        // A remote agent asking for authorization waits for the user's next message, as a question does.
        return result.status === 'auth-required' ? 'input-required' : result.status;
      } catch (err) {
        if (!signal.aborted) throw err;
        onEvent({ type: 'cancelled' });
        return 'cancelled';
      }
    },
  };
}

/** Turns on the running node over A2A. */
function remoteConversation(node: NodeConversation, holder: LockHolder | undefined): Conversation {
  return {
    where: `at ${node.url}${holder ? ` (${describeHolder(holder)})` : ''}`,
    turn: (text, signal, onEvent) => node.turn(text, signal, onEvent),
  };
}

/** Runs one turn through the renderer; a fault is shown and ends the turn as failed. */
async function runTurn(
  conversation: Conversation,
  renderer: ChatRenderer,
  text: string,
  signal: AbortSignal,
): Promise<ChatOutcome> {
  renderer.busy();
  try {
    return await conversation.turn(text, signal, (event) => renderer.event(event));
  } catch (err) {
    renderer.event({ type: 'failed', text: errorMessage(err) });
    return 'failed';
  } finally {
    renderer.end();
  }
}

const PROMPT = 'you> ';

/**
 * The interactive loop. On a terminal: a prompt with line editing and
 * history; Ctrl-C during a turn cancels that turn and the conversation goes
 * on; Ctrl-C or Ctrl-D at the prompt leaves. Piped input is read line by
 * line, each line a turn, until it ends.
 */
async function converse(
  conversation: Conversation,
  renderer: ChatRenderer,
  ctx: CliContext,
  options: { json: boolean },
): Promise<void> {
  const { io } = ctx;
  const terminal = ctx.terminal && !options.json;
  if (!options.json) io.err(`talking to the node ${conversation.where}; Ctrl-C cancels a turn, Ctrl-D leaves\n`);
  const rl = readline.createInterface({
    input: ctx.stdin,
    // Line editing writes straight to the terminal (a terminal is only assumed for the process's own streams).
    output: terminal ? process.stdout : undefined,
    terminal,
    historySize: 500,
    prompt: PROMPT,
  });
  const waiting: string[] = [];
  let turn: AbortController | undefined;
  let closed = false;
  let leave!: () => void;
  const left = new Promise<void>((resolve) => (leave = resolve));
  const stop = new AbortController();
  void ctx.stopSignal.then(() => {
    stop.abort();
    turn?.abort();
    leave();
  });

  const next = async () => {
    while (!turn && waiting.length && !stop.signal.aborted) {
      const text = waiting.shift() as string;
      if (text === 'exit' || text === 'quit') {
        waiting.length = 0;
        closed = true;
        break;
      }
      turn = new AbortController();
      await runTurn(conversation, renderer, text, turn.signal);
      turn = undefined;
    }
    if (closed || stop.signal.aborted) leave();
    else if (terminal) rl.prompt();
  };
  rl.on('line', (raw) => {
    const text = raw.trim();
    if (text) waiting.push(text);
    if (!turn) void next();
  });
  // Raw mode turns Ctrl-C into this event instead of a signal.
  rl.on('SIGINT', () => {
    if (turn) {
      waiting.length = 0;
      turn.abort();
    } else {
      io.out('\n');
      closed = true;
      leave();
    }
  });
  rl.on('close', () => {
    closed = true;
    // Ctrl-D or the end of piped input: what was typed before still runs.
    if (!turn) void next();
  });
  if (terminal) rl.prompt();
  await left;
  rl.close();
  if (terminal) io.out('\n');
}

/** `lango chat [MESSAGE]`: one turn, or an interactive conversation when no message is given. */
export async function chat({ ctx, globals, args, options }: CommandRun): Promise<number> {
  const words = args[0] as string[];
  const interactive = words.length === 0;
  // A one-shot chat names its conversation so the console lists it apart from interactive ones.
  const session =
    (options.session as string | undefined) ??
    (interactive ? undefined : `${ONE_SHOT_SESSION_PREFIX}${newContextId()}`);
  // An interactive chat holding the folder is its node for a while: it runs jobs. A one-shot leaves them to one.
  const target = await targetFor(globals, ctx, { command: 'chat', runJobs: interactive });
  const json = Boolean(options.json);
  const { createHumanRenderer, createJsonRenderer } = await import('../chatEvents');
  const renderer = json
    ? createJsonRenderer(ctx.io)
    : createHumanRenderer(ctx.io, { spinner: ctx.terminal, controls: ctx.controls });
  try {
    const conversation: Conversation =
      target.kind === 'local'
        ? await localConversation(target.app, session ?? `cli:${randomUUID()}`)
        : remoteConversation(
            await (await import('../nodeClient')).NodeConversation.connect(target.url, session, target.owner),
            target.holder,
          );
    if (!interactive) {
      const abort = new AbortController();
      void ctx.stopSignal.then(() => abort.abort());
      const outcome = await runTurn(conversation, renderer, words.join(' '), abort.signal);
      return outcome === 'failed' || outcome === 'cancelled' ? ExitCode.failure : ExitCode.ok;
    }
    await converse(conversation, renderer, ctx, { json });
    return ExitCode.ok;
  } finally {
    if (target.kind === 'local') await target.close();
  }
}
