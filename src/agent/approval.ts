/**
 * How the runtime reads the user's reply to an approval question
 * ({@link ApprovalRequired}): a short yes-word approves, anything else
 * declines (the model is told the user declined and sees what they wrote).
 */
const YES = new Set([
  'yes',
  'y',
  'yeah',
  'yep',
  'sure',
  'ok',
  'okay',
  'approve',
  'approved',
  'allow',
  'go',
  'go ahead',
  'do it',
  'proceed',
  'confirm',
  'confirmed',
]);

/** True when `text` approves the pending call: "yes", "y", "ok", "approve", "go ahead"… (case and punctuation ignored). */
export function isApproval(text: string): boolean {
  const words = text
    .toLowerCase()
    .replace(/[^a-z ]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (YES.has(words)) return true;
  // "yes please", "ok, go ahead": a yes-word first, and nothing that takes it back.
  const [first] = words.split(' ');
  return YES.has(first ?? '') && words.split(' ').length <= 4 && !/\b(no|not|don t|dont|cancel|stop)\b/.test(words);
}
