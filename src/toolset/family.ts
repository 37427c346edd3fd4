import type { AnyTool } from '../agent/tool';
import type { TurnRunner } from '../agent/turn';
import type { ContextProvider, TurnEndHook } from '../agent/turnState';
import type { LangoConfig } from '../config/schema';
import type { Model } from '../llm/model';
import type { PackageLoader } from '../packages';
import type { Logger } from '../log/logger';
import type { SecretRegistry } from '../log/redact';
import type { PrincipalDirectory } from '../principal';
import type { Stores } from '../store';
import type { SecretReferences } from '../vault/references';
import type { VaultAccess } from '../vault/vault';

/** What a tool family's factory may use. Built once by the composition root. */
export interface ToolFamilyDeps {
  config: LangoConfig;
  /** Absolute data directory (`config.dataDir` resolved). */
  dataDir: string;
  /** The node's stores: every row a family keeps lives in one of them. */
  stores: Stores;
  /** The node's vault, opened once (or why there is none). */
  vault: VaultAccess;
  /** Resolves `{{secret:NAME}}` references to the calling principal's secrets. */
  secretReferences: SecretReferences;
  /** Turns a stored principal id back into the principal (jobs run as whoever created them). */
  principals: PrincipalDirectory;
  logger: Logger;
  /** Values to mask in every log line (vault secrets, API keys). */
  secrets: SecretRegistry;
  clock: () => Date;
  /** Finds and loads the optional packages (`src/packages.ts`) a family uses on first need. */
  packages: PackageLoader;
  /** Where the machine's own Chromium is looked for (Debian's `/usr/bin/chromium` when unset). */
  systemChromium?: string;
  /**
   * Tells the toolset that this family's tools changed at runtime (a skill
   * was added): the family replaces the contents of its instance's `tools`
   * array first, then calls this so the agent tree is rebuilt.
   */
  toolsChanged: () => void;
}

/** What a family's background work runs through once the agent tree exists. */
export interface FamilyRuntime {
  /** Runs prompts through the agent tree (cron, background jobs, workflows). */
  runner: TurnRunner;
  /** The node's configured model (offline or OpenAI-compatible), for work that condenses or summarises. */
  model: Model;
  /** Names of the agents in the live tree, remote ones included. */
  agentNames: () => string[];
  /**
   * Whether this process runs stored jobs (cron fires, queued background
   * prompts): true for the node serving the data folder (the default),
   * false for a short CLI command, whose jobs wait for the node so none is
   * started only to be cut off when the command ends.
   */
  runsJobs?: boolean;
}

/** A family once created: its tools, and how to release what it holds. */
export interface ToolFamilyInstance {
  /** Read again whenever the family reports `toolsChanged`. */
  tools: AnyTool[];
  /** Starts background work (schedulers) once the tree and the runner exist. */
  start?: (runtime: FamilyRuntime) => void | Promise<void>;
  close?: () => void | Promise<void>;
  /** Text for an agent's system prompt this turn (memories, a pending inquiry); combined across families. */
  contextProvider?: ContextProvider;
  /** Called after each committed turn, off the answer's path (memory observers). */
  onTurnEnd?: TurnEndHook;
  /**
   * What this machine lacks for some of the family's tools, with how to get
   * it (an optional package not installed): those tools answer the same;
   * `lango doctor` shows it as a warning.
   */
  warning?: string;
}

/**
 * One row of the tool family table. A family is on when `enabled(config)`;
 * `create` throwing marks it broken (the node starts without it and
 * `lango doctor` prints the reason).
 */
export interface ToolFamily {
  /** Config-facing name, e.g. `exec`, `fs`, `secrets`. */
  name: string;
  /**
   * The specialist its tools land with, whatever their names' prefixes (a
   * tool's own `agent` wins); the toolset sets it on each tool.
   */
  agent: string;
  /**
   * Part of the default grant of a peer caller (issue 11 A): true only for
   * families whose every row is the caller's own (knowledge, memory, jobs).
   * Commands, files, the browser, keys, secrets and payments need a grant.
   */
  grantedToPeers?: boolean;
  enabled(config: LangoConfig): boolean;
  /**
   * True when the setup asks for nothing this family needs (it is on by
   * default and the machine may lack what it uses, like a browser): the node
   * runs without it and `lango doctor` warns instead of failing.
   */
  optional?(config: LangoConfig): boolean;
  create(deps: ToolFamilyDeps): ToolFamilyInstance | Promise<ToolFamilyInstance>;
}
