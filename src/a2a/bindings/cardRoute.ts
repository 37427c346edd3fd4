import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { legacyAgentCardRouter } from '@a2a-js/sdk/compat/v0_3/server/express';
import type { Logger } from '../../log/logger';
import type { CardService } from '../card/cardService';
import { jsonErrors } from './errors';
import type { HttpCall } from './httpCall';
import type { Step } from './inbound';

/** Whether an `If-None-Match` list names `etag` (weak comparison, `*` matches). */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
}

/** Seconds shared caches may keep the card; short, since peers joining changes it. */
const CARD_MAX_AGE = 300;

export const CARD_PATH = '/.well-known/agent-card.json';
export const LEGACY_CARD_PATH = '/.well-known/agent.json';
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
  return (call) => {
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
