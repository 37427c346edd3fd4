import type { Task, TaskState } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import { isSettled } from '../../protocol/taskStates';

/** One event folded into a live task, as its listeners hear it. */
export interface HeardEvent {
  event: AgentExecutionEvent;
  /** Resolves once the state it carries is written, when the task's write mode says it must be. */
  written: Promise<void> | undefined;
  /** For a task event: a copy of the task as folded up to it. */
  task: Task | undefined;
  /** The task's state after it. */
  state: TaskState | undefined;
  /** The task's generation after it (issue 27). */
  generation: number;
}

/**
 * A live task's events as an async iterator (`LiveTasks.subscribe`),
 * written by hand rather than as an async generator: a stream reads one per
 * event, and a generator (with the `for await` that feeds it) adds a
 * promise, a suspended frame and a turn of the microtask queue per layer and
 * event. Reads are answered in order, each event once its state is written.
 */
export class TaskSubscription<T> implements AsyncGenerator<T, void, undefined> {
  /** Heard and not yet read. */
  private readonly heard: HeardEvent[] = [];
  /** Reads waiting for an event, in order. */
  private readonly reads: Array<{
    resolve: (result: IteratorResult<T, void>) => void;
    reject: (err: unknown) => void;
  }> = [];
  /** The head event waits for its state to be written. */
  private writing = false;
  /** The settling event was read, or the reader stopped: every later read is done. */
  private ended = false;
  private readonly stop: () => void;

  /** `listen` adds a listener to the live task and returns how to remove it (`LiveTasks.listen`). */
  constructor(
    listen: (listener: (heard: HeardEvent) => void) => () => void,
    private readonly form: (heard: HeardEvent) => T,
  ) {
    this.stop = listen((heard) => {
      if (isSettled(heard.state)) this.stop();
      this.heard.push(heard);
      this.drain();
    });
  }

  next(): Promise<IteratorResult<T, void>> {
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    const head = this.heard[0];
    // The common read: an event already here, nothing written to wait for, no read before it.
    if (head && !head.written && !this.writing && this.reads.length === 0) {
      this.heard.shift();
      return Promise.resolve(this.result(head));
    }
    return new Promise((resolve, reject) => {
      this.reads.push({ resolve, reject });
      this.drain();
    });
  }

  return(): Promise<IteratorResult<T, void>> {
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(err: unknown): Promise<IteratorResult<T, void>> {
    this.end();
    return Promise.reject(err);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.end();
  }

  /** Answers waiting reads with the events heard, in order, each once written. */
  private drain(): void {
    while (!this.writing && this.reads.length > 0 && this.heard.length > 0) {
      const head = this.heard.shift()!;
      if (head.written) {
        this.writing = true;
        head.written.then(
          () => {
            this.writing = false;
            this.answer(head);
            this.drain();
          },
          (err: unknown) => {
            this.writing = false;
            this.reads.shift()?.reject(err);
            this.end();
          },
        );
        return;
      }
      this.answer(head);
    }
  }

  private answer(heard: HeardEvent): void {
    const read = this.reads.shift();
    if (!read) return; // the reader stopped while its state was written
    read.resolve(this.result(heard));
    if (this.ended) this.end();
  }

  /** The read result of `heard`; after the settling event the stream has ended. */
  private result(heard: HeardEvent): IteratorResult<T, void> {
    if (isSettled(heard.state)) {
      this.ended = true;
      this.stop();
    }
    return { value: this.form(heard), done: false };
  }

  /** Stops listening and answers every waiting read as done. */
  private end(): void {
    this.ended = true;
    this.stop();
    this.heard.length = 0;
    for (const read of this.reads.splice(0)) read.resolve({ value: undefined, done: true });
  }
}
