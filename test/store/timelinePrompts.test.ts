import { SharedPrompts, type PromptRow } from '../../src/store/timelinePrompts';
import type { ModelExchange } from '../../src/store/timelines';

const prompt = `You are the orchestrator. ${'Route each request to the specialist that owns it. '.repeat(40)}`;
const exchange: ModelExchange = {
  step: 1,
  instruction: prompt,
  messages: [],
  tools: [],
  answer: { text: '', toolCalls: [] },
};

/** What a store's write of one turn holds: the row's exchanges and the prompt rows it writes with them. */
function write(shared: SharedPrompts): { json: string; prompts: PromptRow[] } {
  const prompts = new Map<string, PromptRow>();
  const json = shared.exchangesJson([exchange], prompts)!;
  return { json, prompts: [...prompts.values()] };
}

describe('the system prompts turns share', () => {
  it('writes a prompt named by digest with every write until a commit holding it is heard of, then once a minute', () => {
    let now = 1_000_000;
    const shared = new SharedPrompts(() => now);
    expect(write(shared)).toMatchObject({ json: expect.stringContaining(prompt), prompts: [] });
    // Named by digest from the second sighting; its row goes with the write.
    const second = write(shared);
    expect(second.json).not.toContain(prompt);
    expect(second.prompts).toHaveLength(1);
    expect(second.json).toContain(second.prompts[0].digest);
    // That write failed (never told committed): the next write carries the row again.
    expect(write(shared).prompts).toHaveLength(1);
    shared.written(write(shared).prompts);
    expect(write(shared).prompts).toEqual([]);
    now += 60_000;
    expect(write(shared).prompts).toEqual([{ digest: second.prompts[0].digest, text: prompt, used_at: now }]);
  });
});
