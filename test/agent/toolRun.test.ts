import { z } from 'zod';
import { createRunner } from '../../src/agent/runner';
import { ApprovalRequired, defineTool } from '../../src/agent/tool';
import { namedCaller, OWNER } from '../../src/principal';
import type { ObservedKind, Observer } from '../../src/observation/observer';
import { makeAgent, openStore } from './helpers';

/**
 * A tool run by a person (the console's tool runner) goes through the
 * runner's own path: the tool of the agent holding it in the principal's
 * tree, refused outside the principal's grant before it runs, its
 * arguments parsed by its schema, its result redacted, and observed.
 */
describe('running one tool for a person', () => {
  const store = openStore();
  afterAll(() => store.close());

  const ran: string[] = [];
  const notes = defineTool({
    name: 'notes_add',
    description: 'Adds a note.',
    parameters: z.object({ text: z.string().min(1) }),
    execute: async ({ text }, ctx) => {
      ran.push(`${ctx.principal.id}:${text}`);
      return { added: text, token: 'sk-hidden-9999' };
    },
  });
  const guarded = defineTool({
    name: 'notes_wipe',
    description: 'Wipes the notes, after a yes.',
    parameters: z.object({}),
    execute: async (_args, ctx) => {
      if (!ctx.approved) throw new ApprovalRequired('Wipe every note?');
      return 'wiped';
    },
  });
  const root = makeAgent({
    name: 'root',
    subAgents: [makeAgent({ name: 'scribe', tools: [notes, guarded] })],
  });
  const seen: string[] = [];
  const asked: Array<string | undefined> = [];
  const observer: Observer = {
    active: true,
    turn: (start) => {
      seen.push(`turn ${start.caller} ${start.sessionId}`);
      asked.push(start.text);
      const observation = {
        child: (kind: ObservedKind, name: string) => {
          seen.push(`${kind} ${name}`);
          return observation;
        },
        set: () => {},
        end: () => {},
        traceparent: () => undefined,
      };
      return observation;
    },
    storeWrite: () => {},
    storeNotification: () => {},
  };
  const runner = createRunner({
    tree: { current: () => root },
    familyOf: (tool) => (tool.startsWith('notes_') ? 'notes' : undefined),
    sessions: store.sessions,
    logger: store.logger,
    maxDelegationRounds: 5,
    maxTurnsPerAgent: 10,
    redact: (text) => text.split('sk-hidden-9999').join('[REDACTED]'),
    observer,
  });
  const input = { sessionId: 'console:tools', tool: 'notes_add', arguments: '{"text":"buy milk"}' };

  it("runs the owner's call with the agent holding the tool, redacts its result and observes it as a turn", async () => {
    const result = await runner.runTool({ ...input, principal: OWNER });
    expect(result).toEqual({ status: 'completed', agent: 'scribe', text: '{"added":"buy milk","token":"[REDACTED]"}' });
    expect(ran).toEqual(['owner:buy milk']);
    expect(seen).toEqual(['turn owner console:tools', 'agent scribe', 'tool notes_add']);
    expect(asked).toEqual(['run notes_add {"text":"buy milk"}']);
  });

  it('shows observers the arguments masked: a credential-named key never reaches them', async () => {
    asked.length = 0;
    await runner.runTool({ ...input, principal: OWNER, arguments: '{"text":"x","password":"hunter2"}' });
    expect(asked).toEqual(['run notes_add {"text":"x","password":"•••"}']);
  });

  it("refuses a caller's call outside its grant before the tool runs", async () => {
    ran.length = 0;
    const caller = namedCaller('bearer:peer', { specialists: 'all', remoteAgents: [], toolFamilies: ['other'] });
    const result = await runner.runTool({ ...input, principal: caller });
    expect(result.status).toBe('failed');
    expect(result.text).toMatch(
      /^tool notes_add refused: the caller "bearer:peer" is not granted the "notes" tool family/,
    );
    expect(ran).toEqual([]);
  });

  it('parses the arguments with the schema, names an unknown tool, and asks before a guarded call until approved', async () => {
    const bad = await runner.runTool({ ...input, principal: OWNER, arguments: '{"text":""}' });
    expect(bad).toMatchObject({ status: 'failed', agent: 'scribe' });
    expect(bad.text).toMatch(/^tool notes_add failed: invalid arguments: text: /);
    expect(await runner.runTool({ ...input, principal: OWNER, tool: 'nope' })).toEqual({
      status: 'failed',
      text: 'no tool named nope on this node',
    });
    const wipe = { ...input, principal: OWNER, tool: 'notes_wipe', arguments: '{}' };
    expect(await runner.runTool(wipe)).toEqual({
      status: 'approval-required',
      agent: 'scribe',
      text: 'Wipe every note?',
    });
    expect(await runner.runTool({ ...wipe, approved: true })).toEqual({
      status: 'completed',
      agent: 'scribe',
      text: 'wiped',
    });
  });
});
