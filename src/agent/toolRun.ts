import { randomUUID } from 'node:crypto';
import type { LlmAgent } from './agent';
import { previewArguments } from './argumentPreview';
import { ObservedTurn, observeToolCall } from './observedTurn';
import { executeToolCall, grantRefusal } from './toolCall';
import type { Logger } from '../log/logger';
import type { Observer } from '../observation/observer';
import type { Principal } from '../principal';

/** One tool run by a person (the console's tool runner), not by a model. */
export interface ToolRunInput {
  principal: Principal;
  /** The conversation the tool's session-scoped rows go to (`console:tools`). */
  sessionId: string;
  tool: string;
  /** The arguments as JSON text, parsed by the tool's schema as a model's would be. */
  arguments: string;
  /** The person said yes to the question the tool asked on an earlier run. */
  approved?: boolean;
  signal?: AbortSignal;
}

/** How a tool run ended: its result, its failure, or the question it asks before it may run. */
export interface ToolRunResult {
  status: 'completed' | 'failed' | 'approval-required';
  /** The specialist the tool belongs to (undefined: no agent of the tree has it). */
  agent?: string;
  /** The result, the failure or the question, redacted and capped. */
  text: string;
}

/** Runs tools as a person asks: the same grant check, argument parsing, redaction and observation as a model's call. */
export interface ToolRunner {
  runTool(input: ToolRunInput): Promise<ToolRunResult>;
}

/**
 * A tool runner over the tree `current` gives the principal: the tool is
 * the one of the agent that holds it there (an owner sees every tool; a
 * caller only its grant's), refused outside the principal's grant before it
 * runs, its arguments parsed by its schema, its result capped and redacted,
 * observed as a one-step turn (timelines, metrics, traces) as the run loop
 * observes a model's call.
 * @example
 * const tools = createToolRunner({ tree, familyOf, logger, observer, redact, maxToolChars: 16_000 });
 * await tools.runTool({ principal: OWNER, sessionId: 'console:tools', tool: 'memory_search', arguments: '{"query":"x"}' });
 */
export function createToolRunner(options: {
  tree: { current(principal?: Principal): LlmAgent };
  familyOf?: (toolName: string) => string | undefined;
  logger: Logger;
  observer: Observer;
  redact: (text: string) => string;
  maxToolChars: number;
}): ToolRunner {
  const logger = options.logger.child({ component: 'tool-run' });
  return {
    async runTool(input) {
      // What observers keep of the run: its arguments as a person may see them (credential-named keys masked).
      const text = `run ${input.tool} ${previewArguments(input.arguments, options.redact)}`;
      const observed = options.observer.active
        ? ObservedTurn.start(options.observer, { ...input, text })
        : ObservedTurn.none;
      try {
        const root = options.tree.current(input.principal);
        const agent = holderOf(root, input.tool);
        const tool = agent?.tools.find((t) => t.name === input.tool);
        if (!agent || !tool) {
          const result: ToolRunResult = { status: 'failed', text: `no tool named ${input.tool} on this node` };
          observed.settle({ status: 'failed', text: result.text, author: root.name });
          return result;
        }
        observed.enter(agent);
        const refusal = options.familyOf && grantRefusal(input.principal, tool.name, options.familyOf(tool.name));
        const call = { id: `run-${randomUUID()}`, name: tool.name, arguments: input.arguments };
        const signal = input.signal ?? new AbortController().signal;
        const context = {
          signal,
          logger: logger.child({ tool: tool.name, agent: agent.name }),
          principal: input.principal,
          sessionId: input.sessionId,
          agentName: agent.name,
          approved: input.approved === true,
        };
        const outcome = await observeToolCall(observed.step, agent.name, call, async () =>
          refusal
            ? { type: 'result', ok: false, content: refusal }
            : executeToolCall(tool, call.arguments, context, options.maxToolChars),
        );
        const result: ToolRunResult =
          outcome.type === 'approval'
            ? { status: 'approval-required', agent: agent.name, text: options.redact(outcome.question) }
            : { status: outcome.ok ? 'completed' : 'failed', agent: agent.name, text: options.redact(outcome.content) };
        observed.settle({
          status:
            result.status === 'failed' ? 'failed' : result.status === 'completed' ? 'completed' : 'input-required',
          text: result.text,
          author: agent.name,
        });
        return result;
      } finally {
        observed.end();
      }
    },
  };
}

/** The LLM agent of the tree holding a tool named `name`: the root's own first, then its specialists'. */
function holderOf(root: LlmAgent, name: string): LlmAgent | undefined {
  if (root.tools.some((t) => t.name === name)) return root;
  for (const agent of root.subAgents) {
    if (agent.kind !== 'llm') continue;
    const found = holderOf(agent, name);
    if (found) return found;
  }
  return undefined;
}
