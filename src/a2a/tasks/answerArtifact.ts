import { randomUUID } from 'node:crypto';
import type { TaskArtifactUpdateEvent } from '@a2a-js/sdk';
import type { RunEvent } from '../../agent/events';
import { textPart } from './messages';

/**
 * The task's `answer` artifact, streamed while the answering agent produces
 * it: each text delta goes out as an `artifact-update` chunk (`append` after
 * the first), and the closing chunk (`lastChunk`) makes the artifact equal
 * the turn's answer. Text while a tool runs is not the answer and is not
 * sent. Text an agent streamed before it called a tool, delegated or was
 * refused was commentary: the next chunk starts the artifact over
 * (`append: false`; a client that only concatenates chunks will have shown
 * it before the answer, as chat interfaces show such preambles), and so
 * does the closing chunk
 * when the answer is not what was streamed (a remote's answer joined from
 * several artifacts, a masked secret, a fallback sentence).
 */
export class AnswerArtifact {
  private readonly artifactId = randomUUID();
  /** The text the caller has been sent since the artifact last started over. */
  private streamed = '';
  private agent: string | undefined;
  /** Set when what was streamed turned out to be commentary: the next chunk replaces it. */
  private stale = false;
  /** Tool calls started and not ended: text while one runs is the tool's, not the answer. */
  private toolsRunning = 0;
  /** The agent {@link description} names. */
  private describedAgent: string | undefined;
  private description = '';

  constructor(private readonly ids: { taskId: string; contextId: string }) {}

  /**
   * The chunk a run event adds to the answer, if any: a text delta becomes
   * one; a tool call, delegation or refusal marks the text before it as
   * commentary. Progress of a remote call leaves a relayed answer as it is.
   */
  chunkFor(event: RunEvent): TaskArtifactUpdateEvent | undefined {
    switch (event.type) {
      case 'text_delta': {
        if (this.toolsRunning > 0) return undefined;
        const restart = this.stale || this.streamed === '' || event.agent !== this.agent;
        if (restart) this.streamed = '';
        this.stale = false;
        this.agent = event.agent;
        this.streamed += event.delta;
        return this.update(event.delta, { append: !restart, lastChunk: false, agent: event.agent });
      }
      case 'tool_start':
        this.toolsRunning += 1;
        if (this.streamed) this.stale = true;
        return undefined;
      case 'tool_end':
        this.toolsRunning = Math.max(0, this.toolsRunning - 1);
        if (this.streamed) this.stale = true;
        return undefined;
      case 'transfer':
      case 'transfer_refused':
      case 'rejected':
      case 'input_required':
        if (this.streamed) this.stale = true;
        return undefined;
      default:
        return undefined;
    }
  }

  /** The closing chunk: the rest of the answer when the caller has its beginning, else the whole answer. */
  last(answer: string, agent: string): TaskArtifactUpdateEvent {
    const continues = this.streamed !== '' && !this.stale && answer.startsWith(this.streamed);
    const text = continues ? answer.slice(this.streamed.length) : answer;
    this.streamed = answer;
    return this.update(text, { append: continues, lastChunk: true, agent });
  }

  private update(text: string, chunk: { append: boolean; lastChunk: boolean; agent: string }): TaskArtifactUpdateEvent {
    // Once per agent, not per chunk: the description is the same for every chunk of one agent's answer.
    if (chunk.agent !== this.describedAgent) {
      this.describedAgent = chunk.agent;
      this.description = `Answer from ${chunk.agent}`;
    }
    const metadata = { agent: chunk.agent };
    return {
      taskId: this.ids.taskId,
      contextId: this.ids.contextId,
      artifact: {
        artifactId: this.artifactId,
        name: 'answer',
        description: this.description,
        parts: [textPart(text)],
        metadata,
        extensions: [],
      },
      append: chunk.append,
      lastChunk: chunk.lastChunk,
      metadata,
    };
  }
}
