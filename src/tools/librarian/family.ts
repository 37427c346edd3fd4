import path from 'node:path';
import type { AnyTool } from '../../agent/tool';
import type { ContextRequest } from '../../agent/turnState';
import { createEmbeddingProvider } from '../../llm/embeddings';
import type { EmbeddingProvider } from '../../llm/embeddings/provider';
import type { GraphStore } from '../../store/graph';
import type { InquiryStore, KnowledgeStore } from '../../store/knowledge';
import { installCommand } from '../../packages';
import type { ToolFamily, ToolFamilyDeps, ToolFamilyInstance } from '../../toolset/family';
import { createGraphTools } from './graphTools';
import { createKnowledgeTools } from './knowledgeTools';
import { RagService } from './rag';
import { createRagTools } from './ragTools';
import { SkillLibrary } from './skills';
import { createSkillTools } from './skillTools';

/** The librarian family once created: its tools plus the stores behind them and its prompt hook. */
export interface LibrarianInstance extends ToolFamilyInstance {
  knowledge: KnowledgeStore;
  inquiries: InquiryStore;
  /** Absent with `graph.enabled: false`. */
  graph?: GraphStore;
  /** Absent with `embedding.provider: none`. */
  rag?: RagService;
  /**
   * For the librarian's instruction ("Proactive Behavior"): the principal's
   * oldest pending inquiry, phrased for the agent to weave into its answer;
   * `undefined` for other agents or when no inquiry is pending.
   */
  contextProvider(request: ContextRequest): Promise<string | undefined>;
}

/** Options of {@link createLibrarian}: the family deps, plus test hooks. */
export type LibrarianOptions = Pick<ToolFamilyDeps, 'config' | 'dataDir' | 'stores' | 'logger'> &
  Partial<Pick<ToolFamilyDeps, 'packages'>> & {
    /** Overrides the provider built from `config.embedding` (tests, benchmarks). */
    embeddings?: EmbeddingProvider;
    /** Collection size from which rag_retrieve also builds an HNSW index. */
    annThreshold?: number;
    /** Wait before embedding again after the provider failed (30 s by default). */
    embeddingRetryMs?: number;
  };

/**
 * Builds the librarian's tools over the node's knowledge stores. Tools are
 * gated as the spec says: `graph_*` only with `graph.enabled`,
 * `rag_retrieve` only with an embedding provider, `create_skill` /
 * `list_skills` with `tools.skills.enabled`.
 * @example
 * const librarian = createLibrarian({ config, dataDir, stores, logger });
 * librarian.start?.(runtime); // embeds rows saved while the node was down
 */
export function createLibrarian(options: LibrarianOptions): LibrarianInstance {
  const { config, stores } = options;
  const logger = options.logger.child({ component: 'librarian' });
  const knowledge = stores.knowledge;
  const inquiries = stores.inquiries;
  const graph = config.graph.enabled ? stores.graph : undefined;
  const provider =
    options.embeddings ?? createEmbeddingProvider(config.embedding, { timeoutMs: config.agent.requestTimeoutMs });
  const rag = provider
    ? new RagService({
        knowledge,
        vectors: stores.vectors,
        provider,
        logger,
        annThreshold: options.annThreshold,
        retryMs: options.embeddingRetryMs,
        packages: options.packages,
      })
    : undefined;
  // Searched in memory (no pgvector) without hnswlib-node: exact, which is fine until collections grow large.
  const exactOnly =
    rag !== undefined && !stores.vectors.search && options.packages && !options.packages.installed('hnswlib-node');

  const tools: AnyTool[] = [
    ...createKnowledgeTools({ knowledge, inquiries, graph, onSaved: () => rag?.schedule() }),
    ...(rag ? createRagTools({ rag }) : []),
    ...(graph ? createGraphTools({ graph }) : []),
    ...(config.tools.skills.enabled
      ? createSkillTools({ skills: new SkillLibrary(path.join(options.dataDir, 'skills')) })
      : []),
  ];
  logger.debug('librarian tools', { tools: tools.map((t) => t.name), embeddings: provider?.id ?? 'none' });

  return {
    tools,
    ...(exactOnly
      ? {
          warning:
            'rag_retrieve searches exactly (fine below 20,000 vectors); for an HNSW index past that, ' +
            `${installCommand('hnswlib-node')} where lango is installed`,
        }
      : {}),
    knowledge,
    inquiries,
    graph,
    rag,
    start: () => rag?.schedule(),
    close: async () => {
      rag?.close();
      await rag?.whenIdle();
    },
    contextProvider: async ({ principal, agentName }) => {
      if (agentName !== 'librarian') return undefined;
      const [inquiry] = await inquiries.pending(principal, 1, { ownOnly: true });
      if (!inquiry) return undefined;
      return (
        `Pending knowledge inquiry #${inquiry.id}: "${inquiry.question}" (nothing saved answers it yet). ` +
        'If it fits the conversation, weave one short, natural question about it into your answer; ' +
        `when the user answers, save it with save_knowledge and dismiss the inquiry with librarian_dismiss_inquiry (id ${inquiry.id}).`
      );
    },
  };
}

/** The librarian's row in the tool family table: always on; its tools gate themselves by config. */
export const librarianFamily: ToolFamily = {
  name: 'librarian',
  agent: 'librarian',
  grantedToPeers: true,
  enabled: () => true,
  create: (deps) => createLibrarian(deps),
};
