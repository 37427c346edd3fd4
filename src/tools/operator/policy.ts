import { ApprovalRequired } from '../../agent/tool';
import { ToolExecutionError } from '../../errors';
import { isOwner, type Principal } from '../../principal';

/** `tools.exec.policy` and its allow-list. */
export interface ExecPolicy {
  /** `allow`: run anything; `deny`: only the allow-list; `ask`: the allow-list, others after the user's yes. */
  policy: 'allow' | 'deny' | 'ask';
  /**
   * Entries: a program name (`ls`, matching `ls -la`), an exact command
   * (`git status`), or a prefix ending in `*` (`git log*`).
   */
  allow: string[];
  /**
   * Set when commands cannot be confined (no usable sandbox): why. Then every
   * command, allow-listed or not, waits for the user's yes.
   */
  unconfined?: string;
}

/** Shell syntax that chains or redirects: a command using it is never matched by the allow-list. */
const SHELL_CONTROL = /[;&|`<>\n\r]|\$\(/;

/**
 * True when `command` is covered by the allow-list. A command that chains or
 * redirects (`ls; rm -rf x`, `cat a > b`, `$(…)`) never matches, so an
 * allow-listed program cannot smuggle another one in.
 */
export function isAllowListed(command: string, allow: string[]): boolean {
  const trimmed = command.trim();
  if (trimmed.length === 0 || SHELL_CONTROL.test(trimmed)) return false;
  const program = trimmed.split(/\s+/)[0];
  return allow.some((entry) => {
    const e = entry.trim();
    if (e.length === 0) return false;
    if (e.endsWith('*')) return trimmed.startsWith(e.slice(0, -1));
    return e === trimmed || (!/\s/.test(e) && e === program);
  });
}

/**
 * Applies the exec policy before a command runs: returns when it may run,
 * throws {@link ToolExecutionError} when it is denied, and
 * {@link ApprovalRequired} when the user must say yes first (policy `ask`,
 * or any command when there is no sandbox). Without a sandbox only the owner
 * may run commands at all (issue 11 B): a caller's command would run with
 * the node's own rights, keys and database included.
 */
export function checkExecPolicy(policy: ExecPolicy, command: string, approved: boolean, principal: Principal): void {
  if (policy.unconfined !== undefined && !isOwner(principal)) {
    throw new ToolExecutionError(
      `command refused: there is no sandbox (${policy.unconfined}), and without one only the node's owner may run commands`,
    );
  }
  const listed = isAllowListed(command, policy.allow);
  if (policy.policy === 'deny' && !listed) {
    throw new ToolExecutionError(`command refused by policy: "${command}" is not on the allow-list (tools.exec.allow)`);
  }
  if (approved) return;
  if (policy.unconfined !== undefined) {
    throw new ApprovalRequired(
      `May I run this shell command? There is no sandbox (${policy.unconfined}), so it would run with the ` +
        `node's own rights, data directory included.\n\n    ${command}\n\nAnswer yes to run it.`,
    );
  }
  if (policy.policy === 'allow' || listed) return;
  throw new ApprovalRequired(
    `May I run this shell command in the workspace?\n\n    ${command}\n\nAnswer yes to run it.`,
  );
}
