import type { Grant } from '../principal';
import type { ToolFamily } from '../toolset/family';
import { execFamily, fsFamily, skillsFamily } from './operator/family';
import { navigatorFamily } from './navigator/family';
import { cryptoFamily, paymentFamily, secretsFamily } from './vault/family';
import { librarianFamily } from './librarian/family';
import { chroniclerFamily } from './chronicler/family';
import { backgroundFamily, cronFamily, workflowFamily } from './automator/families';

/**
 * Every tool family of the node, in the order tools are registered. Adding a
 * family is a new row here plus its folder under `src/tools/`.
 */
export const toolFamilies: ToolFamily[] = [
  execFamily,
  fsFamily,
  skillsFamily,
  navigatorFamily,
  cryptoFamily,
  secretsFamily,
  paymentFamily,
  librarianFamily,
  chroniclerFamily,
  cronFamily,
  backgroundFamily,
  workflowFamily,
];

/**
 * The node's one default grant of a peer caller (a credential configured
 * without a grant): every specialist and remote agent, and the tool families
 * whose rows are the caller's own (`grantedToPeers` in the table above).
 */
export const DEFAULT_PEER_GRANT: Grant = Object.freeze({
  specialists: 'all',
  remoteAgents: 'all',
  toolFamilies: toolFamilies.filter((family) => family.grantedToPeers).map((family) => family.name),
});
