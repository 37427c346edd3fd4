import { errorMessage } from '../errors';
import type { Logger } from '../log/logger';
import type { SecretRegistry } from '../log/redact';
import { redactStrings } from '../log/redactJson';
import type { Stores } from './index';
import type { StoredTask, TaskRowStores } from './taskRows';
import { taskKeyText, type TaskEventAppend, type TaskEventLog, type TaskKey } from './taskEvents';

/**
 * One redaction point for stored text (issue 37): every write of text a
 * caller, a model or a tool wrote passes the node's secret registry on its
 * way into the database, whichever database and whichever store —
 * conversations and their pending approvals, memories, knowledge, learnings
 * and inquiries, the graph, payments' memos and errors, cron, background,
 * workflow and command jobs, turn timelines, A2A task rows, their events
 * and snapshots, push delivery outcomes. The stores are wrapped here once,
 * where the storage is opened (`open.ts`), so no store implementation
 * redacts (or forgets to).
 *
 * Masked: free text. Kept as written: identifiers matched by equality (ids,
 * names, keys, sessions), sealed vault values, vectors, and a push config's
 * own URL and credentials, which its receiver needs verbatim.
 *
 * A value can become a secret after text holding it was stored: a message
 * that carries `secrets_store {"value": …}` is in its task's first event
 * before the tool runs. A running task's events are masked again, in the
 * log, when the registry has learned a value since they were written
 * ({@link redactedTaskEvents}); its row, its timeline and its conversation
 * are written again or for the first time once the turn ends.
 */

/** The storage's stores and task rows behind the redactor (see the module comment). */
export interface RedactedStorage {
  stores: Stores;
  taskRows: TaskRowStores;
  taskEvents: TaskEventLog;
}

/**
 * The stores of one storage with every write of text passing `secrets`;
 * reads and everything else go straight through.
 * @example
 * const { stores, taskRows, taskEvents } = redactedStorage({ stores, taskRows, taskEvents }, secrets, logger);
 */
export function redactedStorage(storage: RedactedStorage, secrets: SecretRegistry, logger: Logger): RedactedStorage {
  const mask = <T>(value: T): T => redactStrings(value, (text) => secrets.redactText(text));
  return {
    stores: redactedStores(storage.stores, mask),
    taskRows: redactedTaskRows(storage.taskRows, mask),
    taskEvents: redactedTaskEvents(storage.taskEvents, secrets, mask, logger),
  };
}

/** Masks every string in a value (the registry over {@link redactStrings}): the same value when it held none. */
type Mask = <T>(value: T) => T;

/**
 * `inner` with `writes` in place of its own members; every other member is
 * the inner store's (methods bound to it, getters read live), so a store
 * made as a class or as an object literal wraps alike.
 */
function withWrites<T extends object>(inner: T, writes: Partial<T>): T {
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(inner, {
    get(target, key) {
      if (Object.hasOwn(writes, key)) return writes[key as keyof T];
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      let method = bound.get(key);
      if (!method) bound.set(key, (method = (value as (...args: unknown[]) => unknown).bind(target)));
      return method;
    },
  });
}

function redactedStores(stores: Stores, mask: Mask): Stores {
  const { sessions, memory, knowledge, inquiries, graph, ledger, cron, background, workflows, execJobs } = stores;
  return {
    ...stores,
    sessions: withWrites(sessions, {
      commitTurn: (principal, sessionId, messages, state, options) =>
        sessions.commitTurn(principal, sessionId, mask(messages), mask(state), options),
      rename: (principal, sessionId, title) => sessions.rename(principal, sessionId, mask(title)),
    }),
    memory: withWrites(memory, {
      addObservations: (principal, sessionId, contents, origin) =>
        memory.addObservations(principal, sessionId, mask(contents), origin),
      addReflection: (principal, sessionId, content, observationIds) =>
        memory.addReflection(principal, sessionId, mask(content), observationIds),
    }),
    knowledge: withWrites(knowledge, {
      saveKnowledge: (principal, input) => knowledge.saveKnowledge(principal, mask(input)),
      saveLearning: (principal, input) => knowledge.saveLearning(principal, mask(input)),
    }),
    inquiries: withWrites(inquiries, {
      raise: (principal, input) => inquiries.raise(principal, { ...input, question: mask(input.question) }),
      dismiss: (principal, id, reason) => inquiries.dismiss(principal, id, mask(reason)),
    }),
    graph: withWrites(graph, {
      add: (principal, triples, source) => graph.add(principal, mask(triples), mask(source)),
    }),
    ledger: withWrites(ledger, {
      begin: (principal, entry, dailyLimit) =>
        ledger.begin(principal, { ...entry, memo: mask(entry.memo) }, dailyLimit),
      settle: (id, outcome) => ledger.settle(id, { ...outcome, error: mask(outcome.error) }),
    }),
    cron: withWrites(cron, {
      insert: (principal, job) => cron.insert(principal, { ...job, prompt: mask(job.prompt) }),
      finishRun: (id, fields) => cron.finishRun(id, { ...fields, result: mask(fields.result) }),
    }),
    background: withWrites(background, {
      insert: (principal, job) =>
        background.insert(principal, { ...job, label: mask(job.label), prompt: mask(job.prompt) }),
      finish: (id, fields) => background.finish(id, { ...fields, result: mask(fields.result) }),
    }),
    workflows: withWrites(workflows, {
      save: (principal, workflow) =>
        workflows.save(principal, { ...workflow, description: mask(workflow.description), yaml: mask(workflow.yaml) }),
      createRun: (principal, run, steps) => workflows.createRun(principal, { ...run, yaml: mask(run.yaml) }, steps),
      finishStep: (runId, stepId, fields) =>
        workflows.finishStep(runId, stepId, { ...fields, result: mask(fields.result) }),
      finishRun: (id, fields) => workflows.finishRun(id, { ...fields, error: mask(fields.error) }),
    }),
    execJobs: withWrites(execJobs, {
      insert: (principal, job) =>
        execJobs.insert(principal, { ...job, command: mask(job.command), cwd: mask(job.cwd) }),
    }),
    timelines: withWrites(stores.timelines, {
      save: (turns) => stores.timelines.save(mask(turns)),
    }),
  };
}

/** A task with its free text masked: status, history, artifacts and metadata (its ids are matched as written). */
function maskedTask(row: StoredTask, mask: Mask): StoredTask {
  const { task } = row;
  const masked = {
    ...task,
    status: mask(task.status),
    history: mask(task.history),
    artifacts: mask(task.artifacts),
    metadata: mask(task.metadata),
  };
  const same =
    masked.status === task.status &&
    masked.history === task.history &&
    masked.artifacts === task.artifacts &&
    masked.metadata === task.metadata;
  return same ? row : { ...row, task: masked };
}

function redactedTaskRows(rows: TaskRowStores, mask: Mask): TaskRowStores {
  const { tasks, pushConfigs } = rows;
  return {
    tasks: withWrites(tasks, {
      write: (written) => tasks.write(written.map((row) => maskedTask(row, mask))),
      claimSend: (send, taskId, row) => tasks.claimSend(send, taskId, row && maskedTask(row, mask)),
      failInterrupted: (reason, at) => tasks.failInterrupted(mask(reason), at),
    }),
    pushConfigs: withWrites(pushConfigs, {
      recordDelivery: (scope, taskId, configId, delivery) =>
        pushConfigs.recordDelivery(scope, taskId, configId, { ...delivery, error: mask(delivery.error) }),
    }),
  };
}

/** Tasks whose events {@link redactedTaskEvents} keeps track of at most. */
const MASKED_TASKS_TRACKED = 10_000;

/**
 * The event log with each event and snapshot masked as it is appended. A
 * task's events were masked with the secrets known when each was written;
 * when the registry has learned a value since (the task's own turn stored
 * it), the task's stored events are read back, and when any of them holds
 * a value now known they are written again masked (purged, then appended
 * under the same generations in one commit) before the next event is
 * appended. A follower meanwhile reads the events once each, in order; a
 * resume in between gets the task as it stands.
 */
function redactedTaskEvents(events: TaskEventLog, secrets: SecretRegistry, mask: Mask, logger: Logger): TaskEventLog {
  /** Running tasks with events written here: the registry's version when they were last all masked. */
  const maskedAt = new Map<string, number>();
  /** Per task, the last append or rewrite under way: a task's writes stay in order. */
  const queue = new Map<string, Promise<unknown>>();
  const masked = (record: TaskEventAppend): TaskEventAppend => {
    const event = mask(record.event);
    const snapshot = mask(record.snapshot);
    return event === record.event && snapshot === record.snapshot ? record : { ...record, event, snapshot };
  };
  /** Writes the task's stored events again, masked, when any of them holds a value learned since. */
  const rewrite = async (key: TaskKey) => {
    const stored: TaskEventAppend[] = [];
    for (let page = await events.read(key, 0); page.length > 0; page = await events.read(key, stored.at(-1)!.seq))
      stored.push(...page);
    const snapshot = await events.snapshot(key);
    const held =
      stored.some((record) => mask(record.event) !== record.event) ||
      (snapshot !== undefined && mask(snapshot.task) !== snapshot.task);
    if (!held) return;
    const again = stored.map((record) =>
      record.seq === snapshot?.seq ? { ...record, snapshot: snapshot.task } : record,
    );
    await events.purge([key]);
    // One commit: a reader sees the events as they were, none, or all of them masked.
    await Promise.all(again.map((record) => events.append(key, masked(record))));
  };
  return withWrites(events, {
    append(key, record) {
      const text = taskKeyText(key);
      const version = secrets.version;
      const since = maskedAt.get(text);
      // Nothing follows a task's end, so its entry goes with it; tasks left waiting for their callers keep theirs,
      // the least recently written going first past the bound.
      maskedAt.delete(text);
      if (!record.terminal) maskedAt.set(text, version);
      if (maskedAt.size > MASKED_TASKS_TRACKED) maskedAt.delete(maskedAt.keys().next().value!);
      const before = queue.get(text);
      const stale = since !== undefined && since < version;
      const ready = stale
        ? (before ?? Promise.resolve())
            .then(() => rewrite(key))
            .catch((err: unknown) =>
              logger.warn('task events not masked again', { taskId: key.taskId, error: errorMessage(err) }),
            )
        : before;
      // Neither a queued write nor a rewrite rejects (each is caught): the event is appended after them either way.
      const written = ready ? ready.then(() => events.append(key, masked(record))) : events.append(key, masked(record));
      if (ready) {
        const settled = written.catch(() => undefined);
        queue.set(text, settled);
        void settled.then(() => {
          if (queue.get(text) === settled) queue.delete(text);
        });
      }
      return written;
    },
    purge(keys) {
      for (const key of keys) maskedAt.delete(taskKeyText(key));
      return events.purge(keys);
    },
  });
}
