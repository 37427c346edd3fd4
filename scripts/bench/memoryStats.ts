/**
 * The memory probe every benchmarked server answers: on SIGUSR2 (with
 * --expose-gc) a full GC, then one JSON line with the RSS and heap in use.
 * Register it before printing the ready line: a SIGUSR2 without a handler
 * would kill the process.
 */
export function answerMemoryProbe(): void {
  process.on('SIGUSR2', () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc) {
      gc();
      gc();
    }
    const m = process.memoryUsage();
    process.stdout.write(
      `${JSON.stringify({ stats: true, gc: Boolean(gc), rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers })}\n`,
    );
  });
}
