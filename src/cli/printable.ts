import type { CliIO } from './io';

/**
 * Nothing from the network is printed raw (issue 28): answers, agent names,
 * descriptions and errors from a node or a peer may carry terminal control
 * sequences — a clipboard write (`ESC]52;c;…`), a window title, a screen
 * clear, colours. The CLI's output edge ({@link printableIO}) writes every
 * C0 control character but newline and tab, DEL and every C1 control
 * character as visible text instead.
 */

/** C0 controls but tab (09) and newline (0a), DEL, and the C1 controls (80-9f). */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * `text` with its control characters escaped visibly: a C0 one as `\x1b`,
 * DEL and a C1 one as `\u009b`. JSON stays JSON with the same data: a JSON
 * text never holds a raw C0 character, and `\u009b` is JSON's own escape.
 * @example
 * printable('\x1b]0;pwned\x07hi\n'); // '\\x1b]0;pwned\\x07hi\n'
 */
export function printable(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    const hex = code.toString(16).padStart(2, '0');
    return code < 0x20 ? `\\x${hex}` : `\\u00${hex}`;
  });
}

/** The CLI's output edge: `io` with everything written through {@link printable}. */
export function printableIO(io: CliIO): CliIO {
  return { out: (text) => io.out(printable(text)), err: (text) => io.err(printable(text)) };
}
