import { previewArguments } from '../../src/agent/argumentPreview';

describe('previewArguments (what chat and A2A progress show of a tool call)', () => {
  const redact = (text: string) => text.replaceAll('sk-live-123', '[REDACTED]');

  it('masks credential-named keys and registered secrets, and keeps other values', () => {
    expect(previewArguments('{"name":"github","value":"ghp_abc"}', redact)).toBe('{"name":"github","value":"•••"}');
    expect(previewArguments('{"command":"curl -H key:sk-live-123 x","token":"t"}', redact)).toBe(
      '{"command":"curl -H key:[REDACTED] x","token":"•••"}',
    );
    expect(previewArguments('{"headers":{"Authorization":"Bearer x"},"n":3}', redact)).toBe(
      '{"headers":{"Authorization":"•••"},"n":3}',
    );
  });

  it('cuts long values and the whole to one short line', () => {
    const long = previewArguments(JSON.stringify({ content: 'x'.repeat(500) }));
    expect(long).toBe(`{"content":"${'x'.repeat(59)}…"}`);
    const many = previewArguments(
      JSON.stringify(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i]))),
    );
    expect(many.length).toBe(200);
    expect(many.endsWith('…')).toBe(true);
  });

  it('shows arguments that are not JSON as redacted text on one line', () => {
    expect(previewArguments('path=notes.txt\nsecret sk-live-123', redact)).toBe('path=notes.txt secret [REDACTED]');
  });
});
