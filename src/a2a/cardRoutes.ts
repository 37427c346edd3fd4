import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { AgentCard, A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { legacyAgentCardRouter } from '@a2a-js/sdk/compat/v0_3/server/express';
import type { LlmAgent } from '../agent/agent';
import type { LangoConfig } from '../config/schema';
import type { Logger } from '../log/logger';
import { CARD_PATHS } from './callNames';
import { buildAgentCard, buildExtendedAgentCard } from './card';
import { jsonErrors } from './errors';
import type { HttpCall } from './httpCall';
import type { Step } from './inbound';
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
  version: string;
  signer?: CardSigner;
}

/**
 * Builds, signs and caches the node's cards. The tree can be rebuilt at any
 * time (peers join or leave), so the cache is keyed on the root object and
 * the base URL: a new tree yields a new card and a new ETag.
 */
export class CardService {
  private cached?: { root: LlmAgent; baseUrl: string; published: Promise<PublishedCard>; extended: Promise<AgentCard> };

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
    if (this.cached && this.cached.root === root && this.cached.baseUrl === baseUrl) return this.cached;
    const inputs = { config: this.options.config, root, baseUrl, version: this.options.version };
    const published = this.sign(buildAgentCard(inputs)).then((card) => {
      const json = JSON.stringify(AgentCard.toJSON(card));
      const etag = `W/"${createHash('sha256').update(json).digest('hex').slice(0, 16)}"`;
      return { card, json, bytes: Buffer.byteLength(json), etag };
    });
    const extended = this.sign(buildExtendedAgentCard(inputs));
    this.cached = { root, baseUrl, published, extended };
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

const CARD_PATH = '/.well-known/agent-card.json';
const LEGACY_CARD_PATH = '/.well-known/agent.json';
const VERSION_HEADER = A2A_VERSION_HEADER.toLowerCase();

/**
 * The card's one route, a step of the inbound chain for `GET` and `HEAD` of
 * `/.well-known/agent-card.json` and `/.well-known/agent.json` (any query):
 * the v1.0 card (`AgentCard.toJSON(card)`, cached with its ETag: the SDK's own
 * card handler stringifies the in-memory form, which mangles
 * `securitySchemes`), or the v0.3 form through the SDK's
 * `legacyAgentCardRouter` for the requests it takes (no `A2A-Version`, or a
 * 0.x one) — on `agent.json` always, on `agent-card.json` with legacy compat
 * on. What that router declines is answered with the v1.0 card; a request
 * that says `A2A-Version: 1.0` skips asking it.
 * @example
 * const run = compose([...shared, cardRoute({ cards, legacyCompat: true, logger }), pages]);
 */
export function cardRoute(options: { cards: CardService; legacyCompat: boolean; logger: Logger }): Step<HttpCall> {
  const { cards, legacyCompat } = options;
  const provider = async () => (await cards.current()).card;
  const legacy = legacyAgentCardRouter({ agentCardProvider: provider, cache: { maxAge: CARD_MAX_AGE } });
  const legacyApp = express();
  legacyApp.disable('x-powered-by');
  legacyApp.set('etag', false);
  if (legacyCompat) legacyApp.use(CARD_PATH, legacy);
  legacyApp.use(LEGACY_CARD_PATH, legacy);
  legacyApp.use((req: Request, res: Response, next: NextFunction) => {
    serveCard(cards, legacyCompat, req, res).catch(next);
  });
  legacyApp.use(jsonErrors(options.logger));
  return (call, next) => {
    if ((call.method !== 'GET' && call.method !== 'HEAD') || !CARD_PATHS.has(call.path)) return next();
    const legacyServed = legacyCompat || call.path === LEGACY_CARD_PATH;
    if (!legacyServed || call.header(VERSION_HEADER)?.trim() === '1.0')
      return serveCard(cards, legacyCompat, call.req, call.res);
    legacyApp(call.req, call.res);
  };
}

async function serveCard(
  cards: CardService,
  legacyCompat: boolean,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
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
