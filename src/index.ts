/**
 * lango's public surface: build a node (`createApp`), or use its parts —
 * tools, the agent tree, the runtime, the A2A card schema and federation —
 * on their own. The CLI (`src/cli/`) is a thin layer over these.
 */

// The node
export { createApp, type AppDeps, type LangoApp, type FamilyStatus, type OwnedTool } from './app';
export { serveNode, type ServingNode } from './serve/serveNode';
export { DataFolderBusyError, type LockHolder } from './serve/dataLock';
export { OWNER_TOKEN_FILE } from './serve/ownerToken';
export type { RouteSpec, Access } from './a2a/bindings/routes';
export {
  createPackageLoader,
  installCommand,
  MissingPackageError,
  OPTIONAL_PACKAGES,
  type OptionalPackage,
  type PackageLoader,
  type PackageLoaderOptions,
} from './packages';
export { loadConfig, resolveConfig, type LoadConfigOptions, type LoadedConfig } from './config/load';
export { LangoConfig, type LangoConfigInput, RemoteAgentEntry } from './config/schema';
export * from './errors';

// Agents, tools and the runtime
export {
  defineTool,
  toolJsonSchema,
  toolFields,
  describeToolFields,
  ApprovalRequired,
  type Tool,
  type AnyTool,
  type ToolContext,
  type ToolField,
} from './agent/tool';
export {
  walkAgents,
  type Agent,
  type LlmAgent,
  type RemoteAgent,
  type RemoteInvocation,
  type RemoteOutcome,
} from './agent/agent';
export { RunEvents, assertNever, type RunEvent } from './agent/events';
export { runToEnd, type TurnInput, type TurnResult, type TurnRunner } from './agent/turn';
export { routesOf } from './agent/transfer';
export { createRunner, type RunnerOptions } from './agent/runner';
export { combineContextProviders, type ContextProvider, type TurnEndHook } from './agent/turnState';

// Models
export type {
  Model,
  ModelEvent,
  ModelMessage,
  ModelRequest,
  ModelRoute,
  ModelToolCall,
  ModelToolSpec,
} from './llm/model';
export { createOpenAIModel, ModelRequestError, type OpenAIModelOptions } from './llm/openai';
export { createOfflineModel, type OfflineModelOptions } from './llm/offline';

// Orchestration and prompts
export { agentSpecs, defineSpecs, specRows, type AgentSpec, type SpecRow, type SpecName } from './orchestration/specs';
export { partitionTools, toolsForSpec, type RoleToolSet } from './orchestration/partition';
export { toolCapability, capabilityDescription } from './orchestration/capabilities';
export { buildOrchestratorInstruction } from './orchestration/instruction';
export {
  buildAgentTree,
  ORCHESTRATOR_NAME,
  SINGLE_AGENT_NAME,
  reservedAgentNames,
  type AgentTreeOptions,
  type SubAgentPromptFunc,
} from './orchestration/tree';
export { createAgentTreeHolder, type AgentTreeHolder } from './orchestration/liveTree';
export { loadPromptSections, buildSystemPrompt, buildOrchestratorSystemPrompt, createSubAgentPrompt } from './prompt';

// Principals
export { OWNER, namedCaller, isOwner, defaultPrincipals, type Principal, type PrincipalDirectory } from './principal';

// Storage
export type { Stores, Storage, StoreHealth, StoreProblem, NodeIdentityStore } from './store';
export type { JobQueue, CronOccurrence } from './store/jobQueue';
export type { SessionStore, StoredMessage, SessionState, SessionInfo } from './store/sessions';
export { toEvents, type SessionEvent } from './store/sessionEvents';
export { openSqliteStorage, type SqliteStorage, type SqliteStorageOptions } from './store/sqlite/storage';
export { openDatabase, migrate, type SqliteDatabase } from './store/sqlite/database';

// Tool families
export { toolFamilies } from './tools/families';
export type { ToolFamily, ToolFamilyDeps, ToolFamilyInstance } from './toolset/family';
export { createToolset, type Toolset } from './toolset/toolset';
export { checkCommandSandbox } from './tools/operator/family';
export { describeSandbox, type SandboxStatus } from './tools/operator/sandbox';

// A2A and federation
export { createA2AServer, type A2AServer, type A2AServerOptions } from './a2a/server';
export { AgentCardV1, AgentCardV03, type ParsedAgentCard } from './protocol/cardSchema';
export {
  ACCOUNTING_EXTENSION,
  ACCOUNT_METADATA_KEY,
  readHopAccount,
  type HopAccount,
  type AccountStep,
  type TokenCount,
} from './protocol/accounting';
export { SKILL_EXTENSION, SKILL_METADATA_KEY } from './protocol/skillExtension';
export * from './federation';

// Logging and trace context
export { TRACEPARENT_KEY, childTraceparent, parseTraceparent, type TraceContext } from './log/traceContext';
export { createMemoryLogger, silentLogger, type Logger, type MemoryLogger, type LogRecord } from './log/logger';
export { SecretRegistry } from './log/redact';
export { createWinstonLogger } from './log/winston';
