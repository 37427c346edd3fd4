import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { ExitCode } from '../io';
import { appFor, configFor, type CliContext, type GlobalOptions } from '../context';

/** `lango card [--out FILE]`: the node's agent card as served at /.well-known/agent-card.json. */
export function registerCardCommand(program: Command, ctx: CliContext, done: (code: number) => void): void {
  program
    .command('card')
    .description("print the node's agent card (JSON)")
    .option('-o, --out <file>', 'write the card to a file (e.g. agent-cards/<name>.json)')
    .action(async (options: { out?: string }) => {
      const { config } = configFor(program.opts<GlobalOptions>(), ctx);
      const app = await appFor(config, ctx);
      try {
        const json = JSON.stringify(await app.agentCard(), null, 2) + '\n';
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
        await app.close();
      }
    });
}
