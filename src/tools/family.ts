import type { AnyTool } from '../agent/tool';
import type { TurnRunner } from '../agent/turn';
import type { ContextProvider, TurnEndHook } from '../agent/turnState';
import type { LangoConfig } from '../config/schema';
import type { Model } from '../llm/model';
import type { Logger } from '../log/logger';
import type { SecretRegistry } from '../log/redact';
import type { SqliteDatabase } from '../store/database';

/** What a tool family's factory may use. Built once by the composition root. */
export interface ToolFamilyDeps {
  config: LangoConfig;
  /** Absolute data directory (`config.dataDir` resolved). */
  dataDir: string;
  db: SqliteDatabase;
  logger: Logger;
  /** Values to mask in every log line (vault secrets, API keys). */
  secrets: SecretRegistry;
  clock: () => Date;
  /** The node's configured model (offline or OpenAI-compatible), for tools that condense or summarise. */
  model: Model;
  /**
   * Runs prompts through the agent tree (cron, background jobs, workflows).
   * Bound late: the tree is built after the tools.
   */
  turns: () => TurnRunner;
  /** Names of the agents in the live tree, remote ones included. */
  agentNames: () => string[];
  /**
   * Tells the node that this family's tools changed at runtime (a skill was
   * added): the family replaces the contents of its instance's `tools` array
   * first, then calls this so the agent tree is rebuilt.
   */
  toolsChanged: () => void;
}

/** A family once created: its tools, and how to release what it holds. */
export interface ToolFamilyInstance {
  /** Read again whenever the family reports `toolsChanged`. */
  tools: AnyTool[];
  /** Starts background work (schedulers) once the tree exists. */
  start?: () => void | Promise<void>;
  close?: () => void | Promise<void>;
  /** Text for an agent's system prompt this turn (memories, a pending inquiry); combined across families. */
  contextProvider?: ContextProvider;
  /** Called after each persisted turn, off the answer's path (memory observers). */
  onTurnEnd?: TurnEndHook;
}

/**
 * One row of the tool family table. A family is on when `enabled(config)`;
 * `create` throwing marks it broken (the node starts without it and
 * `lango doctor` prints the reason).
 */
export interface ToolFamily {
  /** Config-facing name, e.g. `exec`, `fs`, `secrets`. */
  name: string;
  /** The specialist its tools land with (by prefix); informational. */
  agent: string;
  enabled(config: LangoConfig): boolean;
  create(deps: ToolFamilyDeps): ToolFamilyInstance | Promise<ToolFamilyInstance>;
}
