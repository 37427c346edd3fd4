import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { ToolExecutionError } from '../../errors';
import type { Request, Response } from 'playwright-core';
import { REFUSED_HEADER, hostPort, type Refusal } from './guardProxy';
import type { HostPolicy } from './hostPolicy';
import { DEFAULT_MAX_CHARS, excerpt, maxCharsArgument, toolError } from './pageText';
import type { BrowserSessions } from './sessions';

/** Options for {@link createNavigateTool}. */
export interface NavigateToolOptions {
  sessions: BrowserSessions;
  policy: HostPolicy;
  navigationTimeoutMs: number;
}

/** Most refused subresources listed in one result. */
const MAX_BLOCKED_LISTED = 10;

/**
 * The refusal that hit the main frame's navigation (the URL itself or a
 * redirect hop), if any: the proxy answers a refused http hop with its 403
 * page and a refused https hop with a failed tunnel, and Chromium may show
 * either as an error page, so the hop URLs the page requested are matched
 * against what the proxy refused.
 */
function mainFrameRefusal(refusals: Refusal[], hops: string[]): Refusal | undefined {
  const targets = new Set(hops.map(hostPort));
  return refusals.find((r) => targets.has(hostPort(r.url)));
}

function refusedError(refusal: Refusal): ToolExecutionError {
  return new ToolExecutionError(`navigation refused: ${refusal.reason} (${refusal.url})`);
}

/**
 * `browser_navigate`: loads a URL in the session's page (redirects followed,
 * each hop checked by the host policy) and returns its final URL, status,
 * title and a text excerpt.
 * @example
 * const navigate = createNavigateTool({ sessions, policy, navigationTimeoutMs: 15_000 });
 */
export function createNavigateTool(options: NavigateToolOptions): AnyTool {
  const { sessions, policy } = options;
  return defineTool({
    name: 'browser_navigate',
    description:
      'Opens an http(s) URL in your browser page (one page per conversation) and returns the final url after ' +
      'redirects, the HTTP status, the title and an excerpt of the visible text. Hosts outside the browser ' +
      'policy (and private or loopback addresses) are refused.',
    parameters: z.object({
      url: z.string().min(1).describe('Absolute http or https URL'),
      waitUntil: z
        .enum(['load', 'domcontentloaded', 'networkidle'])
        .optional()
        .describe('When the page counts as loaded (default load)'),
      maxChars: maxCharsArgument('Characters of page text to return'),
    }),
    execute: async (args, ctx) => {
      // Checked here too so a refused URL fails fast, without starting a browser.
      const verdict = await policy.checkUrl(args.url);
      if (!verdict.ok) throw new ToolExecutionError(`navigation refused: ${verdict.reason}`);
      return sessions.use(ctx.sessionId, ctx.signal, async ({ page, proxy, pageRefusalsSince }) => {
        const mark = proxy.refusalCount();
        const hops: string[] = [];
        const onRequest = (request: Request): void => {
          if (request.isNavigationRequest() && request.frame() === page.mainFrame()) hops.push(request.url());
        };
        page.on('request', onRequest);
        let response: Response | null;
        try {
          response = await page.goto(args.url, {
            waitUntil: args.waitUntil ?? 'load',
            timeout: options.navigationTimeoutMs,
          });
        } catch (error) {
          const refusal = mainFrameRefusal(proxy.refusalsSince(mark), hops);
          throw refusal ? refusedError(refusal) : toolError(`navigation to ${args.url} failed`, error);
        } finally {
          page.off('request', onRequest);
        }
        const refusal = mainFrameRefusal(proxy.refusalsSince(mark), hops);
        if (refusal || response?.headers()[REFUSED_HEADER]) {
          // Leave no refusal page behind for the next action to read.
          await page.goto('about:blank').catch(() => {});
          throw refusal ? refusedError(refusal) : new ToolExecutionError('navigation refused by the browser policy');
        }
        const body = await page
          .locator('body')
          .innerText({ timeout: 2_000 })
          .catch(() => '');
        const text = excerpt(body, args.maxChars ?? DEFAULT_MAX_CHARS);
        const refused = pageRefusalsSince(mark);
        ctx.logger.info('browser_navigate', {
          url: page.url(),
          status: response?.status(),
        });
        return {
          url: page.url(),
          status: response?.status() ?? null,
          title: await page.title(),
          text: text.text,
          truncated: text.truncated,
          ...(refused.length > 0 ? { blocked: refused.slice(0, MAX_BLOCKED_LISTED) } : {}),
        };
      });
    },
  });
}
