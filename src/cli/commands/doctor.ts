import { ExitCode } from '../io';
import { LangoError } from '../../errors';
import { targetFor, type CliContext } from '../context';
import type { CommandRun } from '../commandRun';
import { describeHolder } from '../../serve/dataLock';
import { fetchNodeAnswer, fetchNodeReport } from '../nodeHttp';
import { describeSandbox } from '../../tools/operator/sandbox';
import type { DoctorReport } from '../../observe/nodeInfo';
import { isDoctorReport } from '../reports';

/** The configuration a report is of: its file, and how it is named (a node at `--url` has its own, unseen). */
interface ConfigShown {
  file?: string;
  label: string;
}

/** Prints the report; the exit code: 1 when a family the configuration asks for is broken. */
function print(report: DoctorReport, config: ConfigShown, json: boolean, ctx: CliContext): number {
  const { provider, model, dataDir, sandbox, families } = report;
  const broken = families.filter((f) => f.state === 'broken' && !f.optional);
  if (json) {
    ctx.io.out(JSON.stringify({ config: config.file ?? null, provider, sandbox, families }, null, 2) + '\n');
  } else {
    const lines = [
      `config: ${config.label}`,
      `model: ${provider}${provider === 'openai' ? ` (${model})` : ''}`,
      `data: ${dataDir}`,
      `sandbox: ${describeSandbox(sandbox)}`,
      ...families.map(
        (f) =>
          `${(f.optional || f.warning ? 'warn' : f.state).padEnd(6)} ${f.name.padEnd(12)} → ${f.agent.padEnd(10)} ` +
          (f.state === 'on'
            ? `${f.tools.length} tools${f.warning ? `; ${f.warning}` : ''}`
            : f.state === 'broken'
              ? f.reason
              : 'disabled by config'),
      ),
    ];
    if (broken.length) lines.push(`broken: ${broken.map((f) => f.name).join(', ')} (configured but unusable)`);
    ctx.io.out(lines.join('\n') + '\n');
  }
  return broken.length ? ExitCode.failure : ExitCode.ok;
}

/**
 * `lango doctor`: each tool family on, off or broken (with the reason), and
 * the model provider. Exit 1 when something the configuration asks for is
 * broken; a family that is merely unavailable on this machine without being
 * asked for (no browser, no executablePath set), or whose tools lack an
 * optional package (they answer how to install it), is a warning and exits 0.
 * While a node serves the data folder, its owner-only `/node/doctor` says
 * the same of that node.
 */
export async function doctor({ ctx, globals, options }: CommandRun): Promise<number> {
  const target = await targetFor(globals, ctx, {
    command: 'doctor',
    runJobs: false,
    level: 'error',
  });
  // With --url the configuration here is not the node's: none is named.
  const file = target.loaded?.file;
  const config: ConfigShown = {
    file,
    label:
      file ??
      (target.loaded ? 'embedded defaults' : `the node's own (at ${target.kind === 'remote' ? target.url : ''})`),
  };
  const json = Boolean(options.json);
  if (target.kind === 'remote') {
    const answer = await fetchNodeReport<unknown>(target.url, 'node/doctor', target.owner);
    if (answer.ok) {
      if (!isDoctorReport(answer.report))
        throw new LangoError(
          `the node at ${target.url} answered /node/doctor with something that is not a lango report`,
        );
      return print(answer.report, config, json, ctx);
    }
    // Not this node's owner (or a node without the route): only whether it is ready.
    const { status, body } = await fetchNodeAnswer(target.url, 'readyz');
    const who = target.holder ? describeHolder(target.holder) : `the node at ${target.url}`;
    if (json) ctx.io.out(JSON.stringify({ config: file ?? null, node: target.url, readiness: body ?? null }) + '\n');
    else
      ctx.io.out(
        `config: ${config.label}\n` +
          `node: ${who}: ${status === 200 ? 'ready' : 'not ready'} ` +
          `(its families are shown to its owner only: ${answer.why})\n`,
      );
    return status === 200 ? ExitCode.ok : ExitCode.failure;
  }
  try {
    const { doctorReport } = await import('../../observe/nodeInfo');
    return print(await doctorReport(target.app.info), config, json, ctx);
  } finally {
    await target.close();
  }
}
