import express, { type RequestHandler } from 'express';
import type { PageRouter } from '../a2a/bindings/pageRouter';
import { z } from 'zod';
import type { LlmAgent } from '../agent/agent';
import { toolJsonSchema } from '../agent/tool';
import { errorMessage } from '../errors';
import { OWNER } from '../principal';
import type { ConsoleSources } from './consoleSources';
import { toSvg } from './graph';

/** One tool the owner may run from the console, with the JSON Schema its form is built from. */
export interface ConsoleTool {
  name: string;
  description: string;
  /** The specialist (or the single agent) holding it. */
  agent: string;
  /** The schema the model is given for its arguments. */
  schema: Record<string, unknown>;
}

/** The body of a tool run: the arguments as the form made them, and the owner's yes to a question asked before. */
const ToolRunBody = z
  .object({ arguments: z.record(z.string(), z.unknown()).default({}), approved: z.boolean().default(false) })
  .strict();

/** Where the console's tool runs keep their session-scoped rows. */
const TOOL_SESSION = 'console:tools';

/**
 * The console's routes about agents: the tree (JSON and SVG) and a remote
 * agent's card; each remote agent's health, breaker and probes, with
 * "probe now"; the cluster's replicas and their heartbeat age; the tools and
 * the tool runner, added to the console's `routes` (the owner's); a change
 * also passes `change`.
 */
export function consoleAgentRoutes(sources: ConsoleSources, routes: PageRouter, change: RequestHandler): void {
  routes.get('/console/api/agents', (_req, res) => {
    res.json(sources.graph());
  });
  routes.get('/console/api/agents.svg', (_req, res) => {
    res.type('image/svg+xml').send(toSvg(sources.graph()));
  });
  routes.get('/console/api/agents/:name/card', (req, res) => {
    const card = sources.remoteCard(req.params.name as string);
    if (card === undefined) {
      res.status(404).json({ error: { code: 404, message: `no remote agent named ${req.params.name}` } });
      return;
    }
    res.type('application/json').send(sources.redact(JSON.stringify(card, null, 2)));
  });

  routes.get('/console/api/peers', (_req, res) => {
    res.json({ peers: sources.peers() });
  });
  routes.post('/console/api/peers/:name/probe', change, express.json({ limit: '1kb' }), async (req, res) => {
    const name = req.params.name as string;
    if (!sources.peers().some((peer) => peer.name === name)) {
      res.status(404).json({ error: { code: 404, message: `no remote agent named ${name}` } });
      return;
    }
    try {
      await sources.probe(name);
      res.json({ peer: sources.peers().find((peer) => peer.name === name) });
    } catch (err) {
      res.status(502).json({ error: { code: 502, message: `the probe of ${name} failed: ${errorMessage(err)}` } });
    }
  });

  routes.get('/console/api/replicas', async (_req, res) => {
    const view = sources.stores().replicas;
    if (!view) return res.json({ clustered: false, replicas: [] });
    try {
      res.json({ clustered: true, replicas: await view.replicas() });
    } catch (err) {
      res.status(503).json({ error: { code: 503, message: `the replicas could not be read: ${errorMessage(err)}` } });
    }
  });

  routes.get('/console/api/tools', (_req, res) => {
    res.json({ tools: consoleTools(sources.root()) });
  });
  routes.post('/console/api/tools/:name/run', change, express.json({ limit: '64kb' }), async (req, res) => {
    const body = ToolRunBody.safeParse(req.body ?? {});
    if (!body.success) {
      const issue = body.error.issues[0];
      const where = issue?.path.length ? issue.path.join('.') : 'body';
      res.status(400).json({ error: { code: 400, message: `${where}: ${issue?.message ?? 'invalid'}` } });
      return;
    }
    try {
      const result = await sources.runTool({
        principal: OWNER,
        sessionId: TOOL_SESSION,
        tool: req.params.name as string,
        arguments: JSON.stringify(body.data.arguments),
        approved: body.data.approved,
      });
      res.status(result.agent === undefined ? 404 : 200).json(result);
    } catch (err) {
      res.status(500).json({ error: { code: 500, message: `the tool could not be run: ${errorMessage(err)}` } });
    }
  });
}

/** Every tool of the tree, each once, with the agent holding it (the root's own first). */
export function consoleTools(root: LlmAgent): ConsoleTool[] {
  const tools: ConsoleTool[] = [];
  const seen = new Set<string>();
  const visit = (agent: LlmAgent) => {
    for (const tool of agent.tools) {
      if (seen.has(tool.name)) continue;
      seen.add(tool.name);
      tools.push({ name: tool.name, description: tool.description, agent: agent.name, schema: toolJsonSchema(tool) });
    }
    for (const sub of agent.subAgents) if (sub.kind === 'llm') visit(sub);
  };
  visit(root);
  return tools.sort((a, b) => a.agent.localeCompare(b.agent) || a.name.localeCompare(b.name));
}
