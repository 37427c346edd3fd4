import { clusterSettings } from '../config/cluster';
import type { LangoConfig } from '../config/schema';
import { errorMessage } from '../errors';
import type { Callers } from '../identity/callers';
import { createIdentity, type Identity } from '../identity/identity';
import type { Logger } from '../log/logger';
import { createObservationHub, type ObservationHub } from '../observation/hub';
import { OWNER } from '../principal';
import type { Stores } from '../store';
import { openNodeStorage, type NodeStorage } from '../store/open';
import { createSecretReferences, type SecretReferences } from '../vault/references';
import { requireVault, type VaultAccess } from '../vault/vault';
import { makePrivateDir } from '../privateFiles';
import type { AppDeps } from './deps';
import type { PreparedNode } from './prepare';
import { nodeCallers, openNodeVault } from './services';

/** What the node opened: what it is told of, its storage, id and vault, its callers and who each request is. */
export interface NodeCore {
  observation: ObservationHub;
  storage: NodeStorage;
  stores: Stores;
  nodeId: string;
  vault: VaultAccess;
  secretReferences: SecretReferences;
  callers: Callers;
  identity: Identity;
}

/** Opens the observer, the storage and the vault, then resolves the callers and builds the identity component. */
export async function openCore(
  config: LangoConfig,
  deps: AppDeps,
  node: PreparedNode,
  cleanups: Cleanups,
): Promise<NodeCore> {
  const { logger, clock, dataDir, secrets } = node;
  // The observer first: the stores report their writes from the moment they open; the sinks join it last.
  const observation = createObservationHub();
  cleanups.push(() => observation.close());
  // The user's alone (0700), whatever the umask: it holds the keys, the database and the owner's token.
  makePrivateDir(dataDir);
  const storage = await openNodeStorage({
    url: config.storage.url,
    cluster: clusterSettings(config),
    dataDir,
    logger,
    clock,
    secrets,
    observer: observation,
    timelinesKept: config.observability.timeline.tasks,
  });
  // Closed last: everything else writes its final rows first.
  cleanups.push(() => storage.close());
  const { stores } = storage;
  const nodeId = await stores.node.nodeId();
  const vault = await openNodeVault(config, { stores, dataDir, secrets, clock, logger });
  const secretReferences = createSecretReferences({
    lookup: (principal, name) => requireVault(vault).secretValue(principal, name),
  });
  const callers = await nodeCallers(config, {
    specs: node.specs,
    resolve: (text) => secretReferences.resolve(OWNER, text),
  });
  for (const credential of callers.credentials) secrets.add(credential.value);
  secrets.add(deps.ownerToken);
  // Who each request is, for every binding and page: one key set and one token cache per issuer. The local
  // owner token (`serveNode`) is one more owner credential; it never makes a2a.auth configured.
  const identity = createIdentity({
    config,
    callers,
    logger,
    ownerTokens: deps.ownerToken ? [deps.ownerToken] : undefined,
    now: () => clock().getTime(),
  });
  return { observation, storage, stores, nodeId, vault, secretReferences, callers, identity };
}

/** The closes of what the node opened, run last first; a failing one is logged and the rest still run. */
export class Cleanups {
  private readonly steps: Array<() => unknown> = [];

  constructor(private readonly logger: Logger) {}

  push(step: () => unknown): void {
    this.steps.push(step);
  }

  async closeAll(): Promise<void> {
    for (const cleanup of this.steps.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (err) {
        this.logger.warn('shutdown step failed', { error: errorMessage(err) });
      }
    }
  }
}
