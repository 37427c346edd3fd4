import { visibleOwner, type Principal } from '../principal';
import type { MemoryScope, Observation, Reflection } from './memory';

/**
 * The rows of the memory tables as both databases return them (SQLite's ids
 * are integers, PostgreSQL's BIGSERIAL come as strings), the one mapping from
 * a row to what the store answers, and the one rule of whose memories a read
 * covers.
 */
export interface ObservationRow {
  id: number | string;
  owner: string;
  session_id: string;
  content: string;
  origin: 'observer' | 'event';
  reflection_id: number | string | null;
  created_at: string;
}

/** A row of the reflections table (see {@link ObservationRow}). */
export interface ReflectionRow {
  id: number | string;
  owner: string;
  session_id: string;
  content: string;
  observation_count: number;
  created_at: string;
}

export const toObservation = (r: ObservationRow): Observation => ({
  id: String(r.id),
  owner: r.owner,
  sessionId: r.session_id,
  content: r.content,
  origin: r.origin,
  reflectionId: r.reflection_id === null ? null : String(r.reflection_id),
  createdAt: r.created_at,
});

export const toReflection = (r: ReflectionRow): Reflection => ({
  id: String(r.id),
  owner: r.owner,
  sessionId: r.session_id,
  content: r.content,
  observationCount: r.observation_count,
  createdAt: r.created_at,
});

/**
 * The owner and session a read is limited to (null: no limit): a session's
 * memories, or `ownOnly`, are the principal's own; otherwise the owner
 * principal reads everyone's and a caller its own.
 */
export function memoryScope(
  principal: Principal,
  scope: MemoryScope,
): { owner: string | null; session: string | null } {
  const own = scope.sessionId !== undefined || scope.ownOnly === true;
  return { owner: own ? principal.id : (visibleOwner(principal) ?? null), session: scope.sessionId ?? null };
}
