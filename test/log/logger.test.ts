import { Writable } from 'node:stream';
import { createMemoryLogger } from '../../src/log/logger';
import { REDACTED, SecretRegistry } from '../../src/log/redact';
import { redactedLogger } from '../../src/log/redactedLogger';
import { createWinstonLogger } from '../../src/log/winston';

/** A stream that keeps what is written to it; `lines(n)` resolves once `n` lines have arrived. */
function sink(): { stream: Writable; text: () => string; lines: (n: number) => Promise<void> } {
  const chunks: string[] = [];
  let wrote: () => void = () => {};
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      wrote();
      done();
    },
  });
  const text = () => chunks.join('');
  const lines = async (n: number) => {
    while (text().split('\n').filter(Boolean).length < n) await new Promise<void>((resolve) => (wrote = resolve));
  };
  return { stream, text, lines };
}

describe('logging', () => {
  it('masks secret-named keys and registered secret values in JSON lines', async () => {
    const secrets = new SecretRegistry();
    secrets.add('sk-live-0123456789');
    const out = sink();
    const logger = createWinstonLogger({ level: 'debug', pretty: false, secrets, stream: out.stream });
    logger.child({ component: 'llm' }).info('calling model with key sk-live-0123456789', {
      apiKey: 'whatever',
      headers: { authorization: 'Bearer abc' },
      note: 'token is sk-live-0123456789',
    });
    await out.lines(1);
    const line = JSON.parse(out.text().trim());
    expect(line.component).toBe('llm');
    expect(line.message).toBe(`calling model with key ${REDACTED}`);
    expect(line.apiKey).toBe(REDACTED);
    expect(line.headers.authorization).toBe(REDACTED);
    expect(line.note).toBe(`token is ${REDACTED}`);
    expect(out.text()).not.toContain('sk-live-0123456789');
  });

  it("writes a grandchild's lines with every binding, drops those below the level, and works unbound", async () => {
    const out = sink();
    const logger = createWinstonLogger({
      level: 'warn',
      pretty: false,
      secrets: new SecretRegistry(),
      stream: out.stream,
    });
    const turn = logger.child({ component: 'runner' }).child({ sessionId: 's-1' });
    turn.info('not shown at warn');
    turn.debug('nor this');
    const { warn, error } = turn;
    warn('slow step', { ms: 5 });
    error('failed');
    // Lines come in order: had the two below the level been written, they would be these two.
    await out.lines(2);
    const lines = out
      .text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toMatchObject([
      { level: 'warn', message: 'slow step', component: 'runner', sessionId: 's-1', ms: 5 },
      { level: 'error', message: 'failed', component: 'runner', sessionId: 's-1' },
    ]);
  });

  it('prints readable lines with the component when pretty', async () => {
    const out = sink();
    const logger = createWinstonLogger({
      level: 'info',
      pretty: true,
      secrets: new SecretRegistry(),
      stream: out.stream,
    });
    logger.child({ component: 'a2a' }).warn('peer skipped', { name: 'weather' });
    logger.debug('not shown at info');
    logger.info('last');
    // Lines come in order: a debug line written would be before the last.
    await out.lines(2);
    expect(out.text()).toMatch(/\[a2a\] peer skipped \{"name":"weather"\}/);
    expect(out.text()).not.toContain('not shown');
  });

  it('keeps child bindings in the memory logger shared with its parent', () => {
    const log = createMemoryLogger();
    log.child({ component: 'federation' }).warn('peer skipped', { name: 'x' });
    expect(log.records).toEqual([
      { level: 'warn', message: 'peer skipped', meta: { component: 'federation', name: 'x' } },
    ]);
  });
  it('masks every line of any logger put behind the secrets, and leaves one that masks with them already', () => {
    const secrets = new SecretRegistry();
    const captured = createMemoryLogger();
    const logger = redactedLogger(captured, secrets);
    logger.info('before: sk-late-0123456789');
    secrets.add('sk-late-0123456789');
    const child = logger.child({ component: 'exec', note: 'bound sk-late-0123456789' });
    const warn = child.warn;
    warn('ran echo sk-late-0123456789', { command: 'echo sk-late-0123456789', token: 'plain', nested: { n: 1 } });
    expect(captured.records.slice(1)).toEqual([
      {
        level: 'warn',
        message: `ran echo ${REDACTED}`,
        meta: {
          component: 'exec',
          note: `bound ${REDACTED}`,
          command: `echo ${REDACTED}`,
          token: REDACTED,
          nested: { n: 1 },
        },
      },
    ]);
    // A line written before the value was known is as it was written: masking is at write time.
    expect(captured.records[0]!.message).toBe('before: sk-late-0123456789');
    const winstonLogger = createWinstonLogger({ level: 'info', pretty: false, secrets, stream: sink().stream });
    expect(redactedLogger(winstonLogger, secrets)).toBe(winstonLogger);
    expect(redactedLogger(winstonLogger, new SecretRegistry())).not.toBe(winstonLogger);
  });
});
