import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { LangoError } from '../../errors';
import { ExitCode } from '../io';
import { targetFor, type CliContext, type GlobalOptions } from '../context';
import { fetchNodeJson } from '../nodeHttp';

/** `lango card [--out FILE]`: the node's agent card as served at /.well-known/agent-card.json. */
export function registerCardCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  program
    .command('card')
    .description("print the node's agent card (JSON)")
    .option('-o, --out <file>', 'write the card to a file (e.g. agent-cards/<name>.json)')
    .addHelpText(
      'after',
      '\nExamples:\n  lango card\n  lango card --out agent-cards/me.json\n  lango --url http://127.0.0.1:18789 card\n',
    )
    .action(async (options: { out?: string }) => {
      const target = await targetFor(program.opts<GlobalOptions>(), ctx, { command: 'card', runJobs: false });
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
        if (options.out) {
          const file = path.resolve(ctx.cwd, options.out);
          fs.mkdirSync(path.dirname(file), { recursive: true });
          fs.writeFileSync(file, json);
          ctx.io.err(`card written to ${file}\n`);
        } else {
          ctx.io.out(json);
        }
        done(ExitCode.ok);
      } finally {
        if (target.kind === 'local') await target.close();
      }
    });
}
