import os from 'node:os';
import path from 'node:path';
import { parseDuration } from '../duration';
import type { LangoConfig } from './schema';

/** This replica's place among others on one PostgreSQL database, with durations in milliseconds. */
export interface ClusterSettings {
  replicaId: string;
  heartbeatMs: number;
  leaseMs: number;
}

/** `cluster.*` resolved: the replica id defaults to the host name and pid (unique while the process lives). */
export function clusterSettings(config: LangoConfig): ClusterSettings {
  return {
    replicaId: config.cluster.replicaId ?? `${os.hostname()}:${process.pid}`,
    heartbeatMs: parseDuration(config.cluster.heartbeatInterval, 'cluster.heartbeatInterval'),
    leaseMs: parseDuration(config.cluster.lease, 'cluster.lease'),
  };
}

/**
 * What makes a configuration unable to work as one of several replicas, one
 * line per key path (the configuration is refused): every replica must open
 * the same vault, so its master key cannot be a key file one replica wrote
 * in its own dataDir; a lease shorter than two heartbeats would lose a
 * healthy replica that missed one beat.
 */
export function clusterProblems(config: LangoConfig): string[] {
  const problems: string[] = [];
  const { heartbeatMs, leaseMs } = clusterSettings(config);
  if (leaseMs < 2 * heartbeatMs) {
    problems.push(
      `cluster.lease: ${config.cluster.lease} must be at least twice cluster.heartbeatInterval (${config.cluster.heartbeatInterval})`,
    );
  }
  if (config.storage.url && config.security.enabled && !config.security.masterKey) {
    problems.push(
      'security.masterKey: required with storage.url (set LANGO_MASTER_KEY to the same key on every replica): ' +
        'a key file in dataDir exists on one replica only, and secrets it seals cannot be opened by the others',
    );
  }
  return problems;
}

/**
 * Folders every replica reads that lango cannot tell are shared: warned
 * about by `lango config check` when `storage.url` is set. A file written
 * through one replica must be there for a turn served by another.
 */
export function clusterWarnings(config: LangoConfig, dataDir: string): string[] {
  if (!config.storage.url) return [];
  const warnings: string[] = [];
  if (config.tools.fs.enabled && !config.tools.fs.root) {
    warnings.push(
      `tools.fs.root: unset, so each replica's workspace is its own ${path.join(dataDir, 'workspace')}; ` +
        'point every replica at one shared folder',
    );
  }
  if (config.tools.skills.enabled) {
    warnings.push(
      `tools.skills: skills are read from ${path.join(dataDir, 'skills')} on each replica; ` +
        'keep that folder shared (or identical) across replicas',
    );
  }
  return warnings;
}

/** The URL without its password: what logs and messages may show. */
export function describeStorageUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `postgres://${parsed.username ? `${parsed.username}@` : ''}${parsed.host}${parsed.pathname}`;
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

/** The password in a storage URL, if any: registered as a secret so no log or reply shows it. */
export function storagePassword(url: string): string | undefined {
  try {
    const { password } = new URL(url);
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}
