import type { Model, ModelEvent, ModelMessage, ModelRequest, ModelRoute, ModelToolSpec } from './model';
import { findToolName, exampleCall, isGreeting, namesAgent, parseToolCall, routeScore } from './offlineSyntax';

const TRANSFER = 'transfer_to_agent';

/** Options of {@link createOfflineModel}. */
export interface OfflineModelOptions {
  /**
   * The agents the named agent may transfer to, with their keywords and
   * tools: the offline model routes by these. The composition root reads
   * them from the live agent tree; without it the model routes nowhere.
   */
  routes?: (agentName: string) => readonly ModelRoute[];
}

/**
 * The embedded default model: deterministic, no network, no API key. It is
 * not a language model; it follows fixed rules so a fresh node works end to
 * end and tests are reproducible.
 *
 * What it does, for the README:
 *
 * - **Greetings** ("hello", "hi", "good morning", …) are answered directly,
 *   saying what the node can do.
 * - **Routing**: the orchestrator picks the specialist whose routing keywords
 *   best match your message (naming one of a specialist's tools counts most)
 *   and transfers to it. When nothing matches it answers itself and lists
 *   what it routes.
 * - **Tools**: a specialist runs a tool only when you name it. Write the tool
 *   name followed by a JSON object of arguments:
 *
 *       exec_shell {"command": "echo hi"}
 *       fs_write {"path": "notes/todo.txt", "content": "buy milk"}
 *
 *   `key=value` pairs work too (quote values with spaces), and a tool with a
 *   single required text argument takes the rest of the line:
 *
 *       fs_read path=notes/todo.txt
 *       exec_shell command="ls -la"
 *       exec_shell ls -la
 *
 *   It answers with the tool's result. Without a tool name, a specialist
 *   replies with its tools and this syntax.
 *
 * For real conversations configure an OpenAI-compatible endpoint
 * (`agent.provider: openai`, `agent.apiKey`, `agent.baseUrl`).
 * @example
 * const tree = createAgentTreeHolder({ tools: () => tools });
 * const model = createOfflineModel({ routes: (agentName) => routesOf(tree.current(), agentName) });
 */
export function createOfflineModel(options: OfflineModelOptions = {}): Model {
  return {
    name: 'offline',
    async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
      if (request.signal.aborted)
        throw Object.assign(new Error('the model call was cancelled'), { name: 'AbortError' });
      const decision = decide(request, offeredRoutes(request, options.routes?.(request.agentName) ?? []));
      if (decision.type === 'text') {
        yield { type: 'text_delta', delta: decision.text };
      } else {
        yield {
          type: 'tool_call',
          call: { id: `offline_${request.messages.length}`, name: decision.name, arguments: decision.arguments },
        };
      }
    },
  };
}

/**
 * The routes of the node's tree that this request offers: a caller's turn
 * offers only the agents its grant allows (`transfer_to_agent`'s enum), and
 * the offline model must not route past that.
 */
function offeredRoutes(request: ModelRequest, routes: readonly ModelRoute[]): readonly ModelRoute[] {
  const transfer = request.tools.find((t) => t.name === TRANSFER);
  const names = (transfer?.parameters as { properties?: { agent_name?: { enum?: unknown } } } | undefined)?.properties
    ?.agent_name?.enum;
  return Array.isArray(names) ? routes.filter((route) => names.includes(route.name)) : routes;
}

type Decision = { type: 'text'; text: string } | { type: 'call'; name: string; arguments: string };

function decide(request: ModelRequest, routes: readonly ModelRoute[]): Decision {
  const { agentName, messages } = request;
  const userIndex = findLastIndex(messages, (m) => m.role === 'user' && !m.runtimeNote);
  const text = userIndex >= 0 ? messages[userIndex]!.content : '';
  const turn = messages.slice(userIndex + 1);
  const ownTools = request.tools.filter((t) => t.name !== TRANSFER);
  const canTransfer = request.tools.some((t) => t.name === TRANSFER);

  // After our own tool call: answer with what it returned.
  const answered = ownToolResults(turn, agentName);
  if (answered) {
    const results = answered.filter((m) => m.name !== TRANSFER);
    const plain = (m: { name: string; content: string }) =>
      m.content.startsWith(`tool ${m.name} failed`) || m.content.startsWith('the user declined');
    if (results.length)
      return say(results.map((m) => (plain(m) ? m.content : `Result of ${m.name}:\n${m.content}`)).join('\n\n'));
  }

  const subRoutes = routes.filter((r) => !r.parent);
  // A message that names a remote agent is for that agent, even when it names a tool this node also has.
  const namedRemote = subRoutes.find((r) => r.remote && namesAgent(text, r.name));
  const call = ownTools.length && !answered && !namedRemote ? parseToolCall(text, ownTools) : undefined;
  if (call) return { type: 'call', ...call };

  if (isGreeting(text)) return say(`Hello! I'm ${agentName}. ${abilities(agentName, subRoutes, ownTools)}`);

  if (canTransfer && !answered) {
    // Never route twice to an agent that already had this request in this turn (it rejected or failed).
    const tried = new Set(
      turn.flatMap((m) => (m.role === 'assistant' && m.author === agentName ? transferTargets(m) : [])),
    );
    const open = subRoutes.filter((r) => !tried.has(r.name));
    // A named remote decides (once: a remote that already had it is not asked again, nor a local stand-in);
    // then the first tool the message names (`workflow_run {… exec_shell …}` is the automator's); else keywords.
    const named = namedRemote
      ? undefined
      : findToolName(
          text,
          open.flatMap((r) => r.toolNames ?? []),
        );
    const best = namedRemote
      ? { route: open.find((r) => r === namedRemote) }
      : named
        ? { route: open.find((r) => r.toolNames?.includes(named.name)) }
        : open
            .map((route) => ({ route, score: routeScore(text, route) }))
            .reduce<{ route?: ModelRoute; score: number }>((a, b) => (b.score > a.score ? b : a), { score: 0 });
    if (best.route) return { type: 'call', name: TRANSFER, arguments: JSON.stringify({ agent_name: best.route.name }) };
  }

  const notes = turn
    .filter((m) => m.role === 'user' && m.runtimeNote)
    // What happened, for the person; the advice at the end was meant for a model.
    .map((m) => {
      const text = m.content.replace(/^\[note from the runtime\]\s*/, '');
      const advice = m.role === 'user' ? m.advice : undefined;
      return advice && text.endsWith(advice) ? text.slice(0, -advice.length).trim() : text;
    });
  const preface = notes.length
    ? `${notes.join(' ')}\n\n`
    : subRoutes.length
      ? 'Nothing in your message matched an agent I route to. '
      : '';
  return say(`${preface}${abilities(agentName, subRoutes, ownTools)}`);
}

/** What this agent can do, and the tool syntax, in plain words. */
function abilities(agentName: string, routes: readonly ModelRoute[], tools: ModelToolSpec[]): string {
  if (routes.length) {
    // The capability phrases say enough; the role sentences before them would make the greeting a page.
    const list = routes
      .map((r) => `${r.name} (${r.description.split('Capabilities: ').pop()!.replace(/\.$/, '')})`)
      .join('; ');
    const shell = routes.some((r) => r.toolNames?.includes('exec_shell'));
    const example = shell ? 'exec_shell {"command": "echo hi"}' : 'tool_name {"argument": "value"}';
    return `I run on the offline model: I answer greetings and route requests by keywords to: ${list}. Say what you need, or name a tool followed by its JSON arguments, e.g. ${example}.`;
  }
  if (tools.length) {
    const list = tools.map((t) => `${t.name} (${t.description.split('\n')[0]})`).join('; ');
    return `I'm ${agentName} on the offline model. My tools: ${list}. To run one, write its name followed by a JSON object of arguments, e.g. ${exampleCall(tools[0]!)} (key=value pairs also work).`;
  }
  return `I'm ${agentName} on the offline model, which only answers greetings, routes requests and runs tools you name; I have no tools. Configure an OpenAI-compatible model (agent.provider: openai) for free-form answers.`;
}

/** The results of this agent's last tool calls when they are the latest messages, else undefined. */
function ownToolResults(
  turn: ModelMessage[],
  agentName: string,
): Array<Extract<ModelMessage, { role: 'tool' }>> | undefined {
  const last = turn.at(-1);
  if (last?.role !== 'tool') return undefined;
  const callerIndex = findLastIndex(
    turn,
    (m) => m.role === 'assistant' && !!m.toolCalls?.some((c) => c.id === last.toolCallId),
  );
  const caller = turn[callerIndex];
  if (caller?.role !== 'assistant' || (caller.author && caller.author !== agentName)) return undefined;
  return turn.slice(callerIndex + 1).filter((m): m is Extract<ModelMessage, { role: 'tool' }> => m.role === 'tool');
}

function transferTargets(message: Extract<ModelMessage, { role: 'assistant' }>): string[] {
  return (message.toolCalls ?? [])
    .filter((c) => c.name === TRANSFER)
    .flatMap((c) => {
      try {
        const name = (JSON.parse(c.arguments) as { agent_name?: unknown }).agent_name;
        return typeof name === 'string' ? [name] : [];
      } catch {
        return [];
      }
    });
}

function say(text: string): Decision {
  return { type: 'text', text };
}

function findLastIndex<T>(items: T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return i;
  return -1;
}
