import { createHash } from 'node:crypto';
import { AgentCard } from '@a2a-js/sdk';
import type { LlmAgent } from '../../agent/agent';
import type { LangoConfig } from '../../config/schema';
import { buildAgentCard, buildExtendedAgentCard } from './card';
import type { CardSigner } from './signing';

/** A card ready to serve: the in-memory form, its ProtoJSON body, that body's size in bytes and its ETag. */
export interface PublishedCard {
  card: AgentCard;
  json: string;
  bytes: number;
  etag: string;
}

/** Options for {@link CardService}. */
export interface CardServiceOptions {
  config: LangoConfig;
  root: () => LlmAgent;
  baseUrl: () => string;
  /** Where the gRPC binding listens (`host:port`), once it does; the card lists it then. */
  grpcAddress?: () => string | undefined;
  version: string;
  signer?: CardSigner;
}

/**
 * Builds, signs and caches the node's cards. The tree can be rebuilt at any
 * time (peers join or leave), so the cache is keyed on the root object and
 * the addresses: a new tree yields a new card and a new ETag.
 */
export class CardService {
  private cached?: {
    root: LlmAgent;
    baseUrl: string;
    grpcAddress: string | undefined;
    published: Promise<PublishedCard>;
    extended: Promise<AgentCard>;
  };

  constructor(private readonly options: CardServiceOptions) {}

  /** The public card. */
  current(): Promise<PublishedCard> {
    return this.refresh().published;
  }

  /** The extended card for authenticated callers. */
  extended(): Promise<AgentCard> {
    return this.refresh().extended;
  }

  private refresh(): NonNullable<CardService['cached']> {
    const root = this.options.root();
    const baseUrl = this.options.baseUrl();
    const grpcAddress = this.options.grpcAddress?.();
    const cached = this.cached;
    if (cached && cached.root === root && cached.baseUrl === baseUrl && cached.grpcAddress === grpcAddress)
      return cached;
    const inputs = { config: this.options.config, root, baseUrl, grpcAddress, version: this.options.version };
    const published = this.sign(buildAgentCard(inputs)).then((card) => {
      const json = JSON.stringify(AgentCard.toJSON(card));
      const etag = `W/"${createHash('sha256').update(json).digest('hex').slice(0, 16)}"`;
      return { card, json, bytes: Buffer.byteLength(json), etag };
    });
    const extended = this.sign(buildExtendedAgentCard(inputs));
    this.cached = { root, baseUrl, grpcAddress, published, extended };
    return this.cached;
  }

  private async sign(card: AgentCard): Promise<AgentCard> {
    return this.options.signer ? this.options.signer.sign(card) : card;
  }
}
