import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** The longest a function in src/ may run, first line to last (house style: functions fit on a screen). */
const MAX_FUNCTION_LINES = 150;
/** A src/ file must stay under this many lines (house style: split before it grows). */
const MAX_FILE_LINES = 500;

/**
 * Offenders tolerated while someone shrinks them, as `file` (the file is too long) or `file name` (a
 * function is). Issue 36 emptied it; it stays so. A listed offender that is fixed must leave this list:
 * the test fails on a stale entry, so the list only ever shrinks.
 */
const KNOWN: readonly string[] = [];

const SRC = path.resolve(__dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The name a reader would use for a function node: its own, its variable's, its property's, or its place. */
function nameOf(node: ts.SignatureDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name) {
    return parent.name.getText(source);
  }
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
  return `(anonymous at line ${line + 1})`;
}

/** Every function with a body in `text`, as its name and its length in lines, first to last. */
function functionLengths(fileName: string, text: string): { name: string; lines: number }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ name: nameOf(node, source), lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The offenders of one file: the file itself when too long, then each function too long, with its size. */
function offendersOf(module: string, text: string): { key: string; detail: string }[] {
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  const file = lines >= MAX_FILE_LINES ? [{ key: module, detail: `${module}: ${lines} lines` }] : [];
  const functions = functionLengths(module, text)
    .filter(({ lines: length }) => length > MAX_FUNCTION_LINES)
    .map(({ name, lines: length }) => ({ key: `${module} ${name}`, detail: `${module} ${name}: ${length} lines` }));
  return [...file, ...functions];
}

describe('sizes (house style: functions fit on a screen, files stay under 500 lines)', () => {
  const offenders = sourceFiles(SRC).flatMap((file) =>
    offendersOf(path.relative(SRC, file).split(path.sep).join('/'), fs.readFileSync(file, 'utf8')),
  );

  it(`has no function in src/ longer than ${MAX_FUNCTION_LINES} lines and no file of ${MAX_FILE_LINES} lines or more`, () => {
    expect(offenders.filter(({ key }) => !KNOWN.includes(key)).map(({ detail }) => detail)).toEqual([]);
  });

  it('lists as known only offenders that are still offending', () => {
    const offending = new Set(offenders.map(({ key }) => key));
    expect(KNOWN.filter((key) => !offending.has(key))).toEqual([]);
  });

  it('catches a long function, a long file and names what it found (the check can fail)', () => {
    const body = Array.from({ length: MAX_FUNCTION_LINES - 1 }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const long = `export function tooLong() {\n${body}\n}\nconst short = () => 1;\n`;
    expect(offendersOf('x.ts', long)).toEqual([{ key: 'x.ts tooLong', detail: 'x.ts tooLong: 151 lines' }]);
    const arrow = `export const factory = () => {\n${body}\n};\n`;
    expect(offendersOf('y.ts', arrow).map(({ key }) => key)).toEqual(['y.ts factory']);
    const fitting = `function fits() {\n${body.split('\n').slice(1).join('\n')}\n}\n`;
    expect(offendersOf('z.ts', fitting)).toEqual([]);
    const file = `${'export const a = 1;\n'.repeat(MAX_FILE_LINES)}`;
    expect(offendersOf('w.ts', file)).toEqual([{ key: 'w.ts', detail: 'w.ts: 500 lines' }]);
    expect(offendersOf('v.ts', 'export const a = 1;\n'.repeat(MAX_FILE_LINES - 1))).toEqual([]);
  });
});
