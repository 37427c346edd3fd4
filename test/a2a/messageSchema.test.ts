import { isPlainSendMessageV1, messageProblem, SendMessageParamsV1 } from '../../src/a2a/bindings/messageSchema';

const message = (fields: Record<string, unknown> = {}) => ({
  messageId: 'm-1',
  role: 'ROLE_USER',
  parts: [{ text: 'hi' }],
  ...fields,
});

/** Params in many shapes, valid and not: the quick check must never pass one the schema refuses. */
const inputs: Array<[string, unknown]> = [
  ['a plain text message', { message: message() }],
  [
    'every optional field',
    {
      message: message({ contextId: 'c', taskId: 't', metadata: { a: 1 } }),
      configuration: { blocking: true },
      metadata: {},
    },
  ],
  ['a numeric role', { message: message({ role: 1 }) }],
  [
    'data, url and raw parts',
    {
      message: message({
        parts: [{ data: { a: [1] } }, { url: 'https://x', mediaType: 'text/plain', filename: 'f' }, { raw: 'AAAA' }],
      }),
    },
  ],
  ['a null data part', { message: message({ parts: [{ data: null }] }) }],
  ['snake_case keys', { message: { message_id: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } }],
  ['no params', undefined],
  ['params an array', [message()]],
  ['no message', {}],
  ['message an array', { message: [] }],
  ['an empty messageId', { message: message({ messageId: '' }) }],
  ['a numeric messageId', { message: message({ messageId: 5 }) }],
  ['a boolean role', { message: message({ role: true }) }],
  ['no role', { message: { messageId: 'm', parts: [{ text: 'x' }] } }],
  ['empty parts', { message: message({ parts: [] }) }],
  ['parts not an array', { message: message({ parts: { text: 'x' } }) }],
  ['a part with two kinds', { message: message({ parts: [{ text: 'x', url: 'y' }] }) }],
  ['a part with no kind', { message: message({ parts: [{ metadata: {} }] }) }],
  ['a boolean text', { message: message({ parts: [{ text: true }] }) }],
  ['a part that is a string', { message: message({ parts: ['hi'] }) }],
  ['part metadata an array', { message: message({ parts: [{ text: 'x', metadata: [] }] }) }],
  ['a numeric filename', { message: message({ parts: [{ url: 'u', filename: 1 }] }) }],
  ['a null contextId', { message: message({ contextId: null }) }],
  ['a numeric taskId', { message: message({ taskId: 3 }) }],
  ['message metadata a string', { message: message({ metadata: 'm' }) }],
  ['configuration null', { message: message(), configuration: null }],
  ['params metadata an array', { message: message(), metadata: [] }],
];

describe('the quick check of v1.0 SendMessage params', () => {
  it.each(inputs)('agrees with the schema on %s', (_name, params) => {
    const schemaAccepts = SendMessageParamsV1.safeParse(params ?? {}).success;
    if (isPlainSendMessageV1(params)) expect(schemaAccepts).toBe(true);
    expect(messageProblem(SendMessageParamsV1, params ?? {}, 'params') === undefined).toBe(schemaAccepts);
  });

  it('passes the common shapes itself, so the schema runs only for the rest', () => {
    const quick = inputs.filter(([, params]) => isPlainSendMessageV1(params)).map(([name]) => name);
    expect(quick).toEqual([
      'a plain text message',
      'every optional field',
      'a numeric role',
      'data, url and raw parts',
      'a null data part',
    ]);
  });

  it('still names the field of a refused message', () => {
    expect(messageProblem(SendMessageParamsV1, { message: message({ parts: [] }) }, 'params')).toBe(
      'params.message.parts: must contain at least one part',
    );
  });
});
