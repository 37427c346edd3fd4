import { isApproval } from '../../src/agent/approval';

describe('reading a reply to an approval question', () => {
  it.each(['yes', 'Y', 'ok', 'OK!', 'approve', 'Yes please', 'ok, go ahead', 'go ahead', 'sure'])(
    'treats "%s" as approval',
    (reply) => {
      expect(isApproval(reply)).toBe(true);
    },
  );

  it.each(['no', 'n', 'nope', 'yes but not now', 'ok do not run it', 'cancel', 'what does it do?', ''])(
    'treats "%s" as declining',
    (reply) => {
      expect(isApproval(reply)).toBe(false);
    },
  );
});
