import type { Task } from '@a2a-js/sdk';
import type { TaskScope } from '../../store/taskRows';
import type { AnswerArtifact } from './answerArtifact';
import type { HeardEvent } from './taskSubscription';

/** When a live task is written to the rows (see `liveTasks.ts`'s module comment). */
export type WriteMode = 'every-state' | 'on-settle';

/**
 * Where a live task is in its turn: `running` until a folded event leaves
 * it waiting for its caller (`awaiting-input`: input- or auth-required) or
 * ended (`settled`); then it is written and let go, and nothing more is
 * folded into it.
 */
export type TaskPhase = 'running' | 'awaiting-input' | 'settled';

/**
 * One task whose turn runs in this process, as the node reads it: every
 * field is read-only; only the methods of its owner, `LiveTasks`
 * (`liveTasks.ts`), change it (they fold events into it, write it, let it go).
 */
export interface LiveTask {
  readonly scope: TaskScope;
  readonly id: string;
  readonly contextId: string;
  readonly writeMode: WriteMode;
  readonly phase: TaskPhase;
  /** The task as folded so far; undefined until its first event (it is being created: it has no row). */
  readonly task: Task | undefined;
  /**
   * The task's generation (issue 27): its generation when this turn began
   * (0 for a new task, its row's for a claimed one), +1 per event folded.
   * Only the turn that owns the task writes its events, so the number it
   * counts is the one the event log keeps.
   */
  readonly generation: number;
  /**
   * Its events go to the event log (`onFolded`'s `kept`): always with
   * replicas (followers elsewhere read them); on one node only once someone
   * may resume from them or wait on them (a request that activated the
   * generation extension: `LiveTasks.watch` and `LiveTasks.keepEventsOf`), so a client that never asks for
   * generations pays nothing for them.
   */
  readonly keepEvents: boolean;
  /** Who hears each event folded from now on (streams, subscribers, webhooks); none for most tasks. */
  readonly listeners: readonly Listener[] | undefined;
  /** Aborts the turn's model, tool and remote calls (a cancel, the node stopping). */
  readonly controller: AbortController;
  /** The turn's answer as it streams (`answerArtifact.ts`). */
  readonly answer: AnswerArtifact;
  /** Resolves with the task once its turn has ended and its last state is written (`LiveTasks.run`). */
  readonly settled: Promise<Task> | undefined;
  /** The write of the state that ended its phase `running`, once folded. */
  readonly closed: Promise<void> | undefined;
}

/** Hears one event folded into a live task. */
export type Listener = (heard: HeardEvent) => void;
