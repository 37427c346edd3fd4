import type { Artifact, Message, Part, Task } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import { isFinished } from '../../protocol/taskStates';

/**
 * Applies one executor event to the task, as the SDK's `ResultManager`
 * merges it into the stored task: the user's message (when given) heads the history,
 * status messages are appended to it, artifacts are replaced or appended
 * by id, metadata is merged, and nothing changes a task once it has ended.
 * The executor's events are fresh objects it never touches again, so they
 * are taken as they are, not copied, except artifacts: the task holds its
 * own copy of each (see {@link ownArtifact}), so an appended chunk goes into
 * it in place instead of copying every earlier chunk again.
 */
export function applyEvent(
  task: Task | undefined,
  event: AgentExecutionEvent,
  userMessage?: Message,
): Task | undefined {
  switch (event.kind) {
    case 'task': {
      const next: Task = { ...event.data, history: event.data.history ?? [] };
      if (task) {
        if (next.history.length === 0) next.history = task.history;
        next.artifacts = mergeArtifacts(task.artifacts, next.artifacts);
        if (task.metadata || next.metadata) next.metadata = { ...task.metadata, ...next.metadata };
      }
      next.artifacts = next.artifacts.map(ownArtifact);
      if (userMessage && !next.history.some((m) => m.messageId === userMessage.messageId))
        next.history = [userMessage, ...next.history];
      return next;
    }
    case 'statusUpdate': {
      const update = event.data;
      if (!task || task.id !== update.taskId) return task;
      const state = task.status?.state;
      if (isFinished(state) && update.status?.state !== state) return task;
      task.status = update.status;
      if (update.metadata) task.metadata = { ...task.metadata, ...update.metadata };
      const message = update.status?.message;
      if (message && !task.history.some((m) => m.messageId === message.messageId))
        task.history = [...task.history, message];
      return task;
    }
    case 'artifactUpdate': {
      const update = event.data;
      const artifact = update.artifact;
      if (!task || !artifact || task.id !== update.taskId) return task;
      const index = task.artifacts.findIndex((a) => a.artifactId === artifact.artifactId);
      if (index === -1) task.artifacts = [...task.artifacts, ownArtifact(artifact)];
      else if (!update.append) task.artifacts[index] = ownArtifact(artifact);
      else {
        const existing = task.artifacts[index]!;
        appendParts(existing.parts, artifact.parts);
        if (artifact.name) existing.name = artifact.name;
        if (artifact.description) existing.description = artifact.description;
        if (artifact.metadata && !holds(existing.metadata, artifact.metadata))
          existing.metadata = { ...existing.metadata, ...artifact.metadata };
      }
      // Each answer chunk carries the same metadata: merged (a new object per chunk) only when it changes something.
      if (update.metadata && !holds(task.metadata, update.metadata))
        task.metadata = { ...task.metadata, ...update.metadata };
      return task;
    }
    case 'message':
      // The node's executor answers with tasks only; a direct reply would end no task.
      return task;
  }
}

/** Whether `target` already has every entry of `entries` (so merging them in would change nothing). */
function holds(target: Record<string, unknown> | undefined, entries: Record<string, unknown>): boolean {
  if (!target) return false;
  for (const key in entries) if (!Object.hasOwn(target, key) || target[key] !== entries[key]) return false;
  return true;
}

/**
 * Appends a chunk's parts: a text part continuing a text part extends it, so a
 * streamed answer reads as one text in every snapshot (GetTask, ListTasks, a
 * retried send, a resumed follower), as its chunks read when concatenated.
 * The last part is replaced, not changed: the chunk it came in may still be
 * queued for the store or a follower.
 */
function appendParts(parts: Part[], chunk: Part[]): void {
  for (const part of chunk) {
    const last = parts.at(-1);
    if (
      last?.content?.$case === 'text' &&
      part.content?.$case === 'text' &&
      !last.metadata &&
      !part.metadata &&
      last.mediaType === part.mediaType
    )
      parts[parts.length - 1] = { ...last, content: { $case: 'text', value: last.content.value + part.content.value } };
    else parts.push(part);
  }
}

/**
 * The task's own copy of an artifact an event carried: the event may still
 * be on its way to a stream when a later chunk is appended to the task's.
 */
function ownArtifact(artifact: Artifact): Artifact {
  return { ...artifact, parts: [...artifact.parts] };
}

function mergeArtifacts(earlier: Artifact[], incoming: Artifact[]): Artifact[] {
  if (earlier.length === 0) return incoming;
  const byId = new Map(incoming.map((a) => [a.artifactId, a]));
  const merged = earlier.map((a) => byId.get(a.artifactId) ?? a);
  const seen = new Set(earlier.map((a) => a.artifactId));
  return [...merged, ...incoming.filter((a) => !seen.has(a.artifactId))];
}
