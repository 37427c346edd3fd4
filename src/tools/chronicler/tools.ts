import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import type { Chronicler } from './chronicler';

const Scope = z.enum(['session', 'all']).default('session').describe('this conversation only, or every conversation');

/**
 * The chronicler's tools: `memory_list_observations`,
 * `memory_list_reflections`, `memory_recall`, `observe_event`,
 * `reflect_summary`. "This conversation" is the calling turn's session.
 */
export function createChroniclerTools(options: { chronicler: Chronicler }): AnyTool[] {
  const { chronicler } = options;
  const store = chronicler.store;
  return [
    defineTool({
      name: 'memory_list_observations',
      description: 'Lists observations: short notes condensed from conversations (or recorded as events), newest last.',
      parameters: z.object({ scope: Scope, limit: z.number().int().min(1).max(200).default(20) }),
      execute: async ({ scope, limit }, ctx) => ({
        observations: await store.observations(ctx.principal, {
          sessionId: scope === 'session' ? ctx.sessionId : undefined,
          limit,
        }),
      }),
    }),
    defineTool({
      name: 'memory_list_reflections',
      description: 'Lists reflections: condensations of many observations of a conversation, newest last.',
      parameters: z.object({ scope: Scope, limit: z.number().int().min(1).max(100).default(10) }),
      execute: async ({ scope, limit }, ctx) => ({
        reflections: await store.reflections(ctx.principal, {
          sessionId: scope === 'session' ? ctx.sessionId : undefined,
          limit,
        }),
      }),
    }),
    defineTool({
      name: 'memory_recall',
      description:
        'Searches observations and reflections of every conversation you can see (or only this one) by keywords, best match first with scores.',
      parameters: z.object({
        query: z.string().trim().min(1).max(1000),
        scope: Scope.default('all'),
        limit: z.number().int().min(1).max(50).default(8),
      }),
      execute: async ({ query, scope, limit }, ctx) => {
        const memories = await store.recall(ctx.principal, query, {
          limit,
          sessionId: scope === 'session' ? ctx.sessionId : undefined,
        });
        return memories.length ? { memories } : { memories, note: 'nothing remembered matches that' };
      },
    }),
    defineTool({
      name: 'observe_event',
      description:
        'Records one observation about this conversation now (an event, a decision, a preference worth remembering).',
      parameters: z.object({ content: z.string().trim().min(1).max(2000) }),
      execute: async ({ content }, ctx) => ({
        observation: await chronicler.recordEvent(ctx.principal, ctx.sessionId, content),
      }),
    }),
    defineTool({
      name: 'reflect_summary',
      description:
        "Condenses this conversation's observations not yet reflected on into a reflection now, and returns it.",
      parameters: z.object({}),
      execute: async (_args, ctx) => {
        const reflection = await chronicler.reflectNow(ctx.principal, ctx.sessionId);
        return reflection ? { reflection } : { reflection: null, note: 'no observations to reflect on yet' };
      },
    }),
  ];
}
