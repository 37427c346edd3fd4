import type { Principal } from '../principal';

/** One condensed note about a conversation. */
export interface Observation {
  id: string;
  /** The principal whose conversation it was condensed from. */
  owner: string;
  sessionId: string;
  content: string;
  /** `observer` when condensed from messages, `event` when recorded with observe_event. */
  origin: 'observer' | 'event';
  /** The reflection that absorbed it, once reflected. */
  reflectionId: string | null;
  createdAt: string;
}

/** A condensation of several observations of a session. */
export interface Reflection {
  id: string;
  owner: string;
  sessionId: string;
  content: string;
  observationCount: number;
  createdAt: string;
}

/** A recalled memory with its relevance (higher is better). */
export type Memory =
  ({ type: 'observation'; score: number } & Observation) | ({ type: 'reflection'; score: number } & Reflection);

/**
 * Which memories a read covers: one session of the principal, or (no
 * `sessionId`) every memory the principal can see — the owner's reach is
 * everyone's unless `ownOnly` (what is injected into a prompt is only ever
 * the principal's own).
 */
export interface MemoryScope {
  sessionId?: string;
  ownOnly?: boolean;
}

/**
 * Observational memory: observations, reflections and how far each session
 * has been observed. Session-keyed calls address the principal's own
 * session (conversations are keyed by principal and session id).
 */
export interface MemoryStore {
  addObservations(
    principal: Principal,
    sessionId: string,
    contents: string[],
    origin: Observation['origin'],
  ): Promise<Observation[]>;
  /** Stores a reflection and marks the observations it absorbed (the principal's own only). */
  addReflection(
    principal: Principal,
    sessionId: string,
    content: string,
    observationIds: string[],
  ): Promise<Reflection>;
  /** Observations newest last. */
  observations(
    principal: Principal,
    options: MemoryScope & { limit: number; unreflectedOnly?: boolean },
  ): Promise<Observation[]>;
  /** Reflections newest last. */
  reflections(principal: Principal, options: MemoryScope & { limit: number }): Promise<Reflection[]>;
  countUnreflected(principal: Principal, sessionId: string): Promise<number>;
  /** Observations and reflections matching `query`, best first. */
  recall(principal: Principal, query: string, options: MemoryScope & { limit: number }): Promise<Memory[]>;
  /** How many of a session's messages the observer has already condensed. */
  observedMessages(principal: Principal, sessionId: string): Promise<number>;
  setObservedMessages(principal: Principal, sessionId: string, count: number): Promise<void>;
}
