import express from 'express';
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import type { AgentCard, Message, Part, Task } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { closeServer, listen } from './federationPeers';

/**
 * A hostile A2A node on 127.0.0.1 (issue 28, item 5): everything it sends a
 * CLI — answers, agent names, descriptions, progress, errors, its card, its
 * catalog, its reports — carries terminal control sequences: a clipboard
 * write, window-title changes (C0 and C1), a screen clear, colours.
 */
export const HOSTILE = {
  /** OSC 52: writes "hacked" to the terminal's clipboard. */
  clipboard: '\x1b]52;c;aGFja2Vk\x07',
  /** OSC 0: sets the window title. */
  title: '\x1b]0;PWNED-TITLE\x07',
  /** Clears the screen and homes the cursor. */
  clear: '\x1b[2J\x1b[H',
  red: '\x1b[31m',
  /** The same attacks spelt with C1 controls: CSI, and OSC ended by ST. */
  c1Colour: '\u009b31m',
  c1Title: '\u009d0;C1-TITLE\u009c',
} as const;

/** Every attack at once, between two words a test can look for. */
export const HOSTILE_TEXT = `safe-start ${Object.values(HOSTILE).join(' ')} safe-end`;

/** The text the CLI must show for {@link HOSTILE_TEXT}: each control character written out. */
export const HOSTILE_SHOWN =
  'safe-start \\x1b]52;c;aGFja2Vk\\x07 \\x1b]0;PWNED-TITLE\\x07 \\x1b[2J\\x1b[H \\x1b[31m \\u009b31m \\u009d0;C1-TITLE\\u009c safe-end';

const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

function agentMessage(value: string, taskId: string, contextId: string): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [text(value)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A running hostile node. */
export interface HostileNode {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the hostile node: a message containing `fail` ends failed with the
 * hostile text as the reason; any other is answered with progress, a tool
 * call and the hostile answer, all under a hostile agent name.
 */
export async function startHostileNode(): Promise<HostileNode> {
  const app = express();
  const { server, origin } = await listen(app);
  const url = `${origin}/`;
  const agent = `evil${HOSTILE.title}${HOSTILE.red}`;
  const card: AgentCard = {
    name: `hostile${HOSTILE.title}`,
    description: HOSTILE_TEXT,
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
    provider: undefined,
    version: '1.0.0',
    documentationUrl: '',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
  const executor: AgentExecutor = {
    async execute(rc: RequestContext, bus: ExecutionEventBus) {
      const { taskId, contextId } = rc;
      const task: Task = {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [],
        history: [rc.userMessage],
        metadata: undefined,
      };
      bus.publish(AgentEvent.task(task));
      const status = (state: TaskState, note?: string, metadata?: Record<string, unknown>) =>
        bus.publish(
          AgentEvent.statusUpdate({
            taskId,
            contextId,
            status: {
              state,
              message: note ? { ...agentMessage(note, taskId, contextId), metadata } : undefined,
              timestamp: new Date().toISOString(),
            },
            metadata,
          }),
        );
      const asked = (rc.userMessage.parts ?? [])
        .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
        .join('');
      if (asked.includes('fail')) {
        status(TaskState.TASK_STATE_FAILED, HOSTILE_TEXT);
        return;
      }
      status(TaskState.TASK_STATE_WORKING, HOSTILE_TEXT, { agent });
      status(TaskState.TASK_STATE_WORKING, 'calling', { event: 'tool_start', agent, tool: `tool${HOSTILE.clear}` });
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          append: false,
          lastChunk: true,
          metadata: undefined,
          artifact: {
            artifactId: randomUUID(),
            name: 'answer',
            description: '',
            parts: [text(HOSTILE_TEXT)],
            metadata: { agent },
            extensions: [],
          },
        }),
      );
      status(TaskState.TASK_STATE_COMPLETED);
    },
    cancelTask: async () => {},
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: async () => card }));
  // What `lango agents` and `lango tools` ask a node for: a refusal and a report, both hostile.
  app.get('/node/agents', (_req, res) => {
    res.status(403).json({ error: { code: 403, message: `go away${HOSTILE.clear}` } });
  });
  app.get('/node/tools', (_req, res) => {
    res.json({
      rootName: agent,
      tools: [{ name: `tool${HOSTILE.title}`, owner: agent, description: HOSTILE_TEXT, arguments: [] }],
    });
  });
  app.get('/agents', (_req, res) => {
    res.json({
      root: agent,
      agents: [
        {
          name: `peer${HOSTILE.clipboard}`,
          kind: 'remote',
          description: HOSTILE_TEXT,
          capabilities: [HOSTILE_TEXT],
          cardUrl: `http://127.0.0.1:9/${HOSTILE.red}`,
          health: { state: 'healthy' },
        },
      ],
    });
  });
  app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return { url: origin, close: () => closeServer(server as http.Server) };
}
