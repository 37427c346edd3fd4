import { createHash } from 'node:crypto';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { AgentCard, A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { legacyAgentCardRouter } from '@a2a-js/sdk/compat/v0_3/server/express';
import type { LlmAgent } from '../agent/agent';
import type { LangoConfig } from '../config/schema';
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

/** Whether an `If-None-Match` list names `etag` (weak comparison, `*` matches). */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
}

/** Seconds shared caches may keep the card; short, since peers joining changes it. */
const CARD_MAX_AGE = 300;

/**
 * Routes for `/.well-known/agent-card.json` (v1.0; v0.3 form for header-less
 * or `A2A-Version: 0.3` requests when legacy compat is on, as the SDK does)
 * and `/.well-known/agent.json` (v0.3 form for older peers). The v1.0 body is
 * `AgentCard.toJSON(card)`: the SDK's own card handler stringifies the
 * in-memory form, which mangles `securitySchemes`.
 */
export function cardRoutes(options: { cards: CardService; legacyCompat: boolean }): Router {
  const { cards, legacyCompat } = options;
  const router = express.Router();
  const provider = async () => (await cards.current()).card;
  const legacy = legacyAgentCardRouter({ agentCardProvider: provider, cache: { maxAge: CARD_MAX_AGE } });
  const serveV1 = (req: Request, res: Response) => serveCard(cards, legacyCompat, req, res);

  if (legacyCompat) router.use('/.well-known/agent-card.json', legacy);
  router.get('/.well-known/agent-card.json', serveV1);
  router.use('/.well-known/agent.json', legacy);
  router.get('/.well-known/agent.json', serveV1);
  return router;
}

const CARD_PATH = '/.well-known/agent-card.json';

/**
 * The v1.0 card for a plain `GET /.well-known/agent-card.json` that asks for
 * `A2A-Version: 1.0` (any version, with legacy compat off), answered before
 * every other layer of the app: it is the node's most requested document.
 * Anything else (v0.3 callers, a query string, HEAD) goes on to
 * {@link cardRoutes}, which answers the same v1.0 body.
 */
export function cardFastPath(options: { cards: CardService; legacyCompat: boolean }): RequestHandler {
  const { cards, legacyCompat } = options;
  return (req, res, next) => {
    if (req.method !== 'GET' || req.url !== CARD_PATH) return next();
    const version = req.headers[A2A_VERSION_HEADER_LOWER];
    if (legacyCompat && (typeof version !== 'string' || version.trim() !== '1.0')) return next();
    serveCard(cards, legacyCompat, req, res).catch(next);
  };
}

const A2A_VERSION_HEADER_LOWER = A2A_VERSION_HEADER.toLowerCase();

async function serveCard(cards: CardService, legacyCompat: boolean, req: Request, res: Response): Promise<void> {
  const { json, bytes, etag } = await cards.current();
  const headers: Record<string, string | number> = {
    ETag: etag,
    'Cache-Control': `public, max-age=${CARD_MAX_AGE}`,
  };
  if (legacyCompat) headers.Vary = A2A_VERSION_HEADER;
  if (matchesEtag(req.headers['if-none-match'], etag)) {
    res.writeHead(304, headers).end();
    return;
  }
  headers['Content-Type'] = 'application/json; charset=utf-8';
  headers['Content-Length'] = bytes;
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : json);
}
