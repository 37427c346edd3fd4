import { MAX_JSON_DEPTH, nestingProblem } from '../../src/a2a/bindings/jsonDepth';

/** A value nested `levels` deep, alternating objects and arrays. */
const nested = (levels: number): unknown => {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { next: value, flat: 1 };
  return value;
};

describe('nestingProblem', () => {
  it('accepts exactly the limit and refuses one level more, through arrays and objects alike', () => {
    expect(nestingProblem(nested(MAX_JSON_DEPTH), 'params')).toBeUndefined();
    expect(nestingProblem(nested(MAX_JSON_DEPTH + 1), 'params')).toBe(
      `params nests deeper than ${MAX_JSON_DEPTH} levels`,
    );
    expect(nestingProblem({ a: [1, { b: nested(2) }] }, 'params', 5)).toBeUndefined();
    expect(nestingProblem({ a: [1, { b: nested(3) }] }, 'params', 5)).toBe('params nests deeper than 5 levels');
  });

  it('has no problem with primitives, null and empty containers', () => {
    for (const value of [undefined, null, 1, 'x', {}, []]) expect(nestingProblem(value, 'params', 1)).toBeUndefined();
  });
});
