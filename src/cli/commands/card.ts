import fs from 'node:fs';
import path from 'node:path';
import { LangoError } from '../../errors';
import { ExitCode } from '../io';
import { targetFor } from '../context';
import type { CommandRun } from '../commandRun';
import { fetchNodeJson } from '../nodeHttp';

/** `lango card [--out FILE]`: the node's agent card as served at /.well-known/agent-card.json. */
export async function card({ ctx, globals, options }: CommandRun): Promise<number> {
  const target = await targetFor(globals, ctx, { command: 'card', runJobs: false });
  try {
    let card: unknown;
    if (target.kind === 'local') {
      card = await target.app.agentCard();
    } else {
      const { status, body } = await fetchNodeJson(target.url, '.well-known/agent-card.json');
      if (status !== 200) throw new LangoError(`the node at ${target.url} answered its card with HTTP ${status}`);
      card = body;
    }
    const json = JSON.stringify(card, null, 2) + '\n';
    const out = options.out as string | undefined;
    if (out) {
      const file = path.resolve(ctx.cwd, out);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, json);
      ctx.io.err(`card written to ${file}\n`);
    } else {
      ctx.io.out(json);
    }
    return ExitCode.ok;
  } finally {
    if (target.kind === 'local') await target.close();
  }
}
