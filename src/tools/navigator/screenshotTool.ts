import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { ToolExecutionError } from '../../errors';
import { toolError } from './pageText';
import type { BrowserSessions } from './sessions';

/** Options for {@link createScreenshotTool}. */
export interface ScreenshotToolOptions {
  sessions: BrowserSessions;
  /** Screenshots go to `<dataDir>/screenshots/`. */
  dataDir: string;
  clock: () => Date;
  actionTimeoutMs: number;
}

/** Width and height from a PNG's IHDR chunk (bytes 16–23). */
function pngSize(png: Buffer): { width: number; height: number } {
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** A file name that says whose and when, and cannot escape the folder whatever the session id holds. */
function fileName(sessionId: string, now: Date): string {
  const who = sessionId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40) || 'session';
  const when = now.toISOString().replace(/[:.]/g, '-');
  return `${who}-${when}-${randomBytes(3).toString('hex')}.png`;
}

/**
 * `browser_screenshot`: saves a PNG of the session's page (or one element)
 * under `<dataDir>/screenshots/` and returns its path and size — a reference,
 * never the image bytes, which would flood the model's context.
 * @example
 * const screenshot = createScreenshotTool({ sessions, dataDir: '/var/lango', clock: () => new Date(), actionTimeoutMs: 5_000 });
 */
export function createScreenshotTool(options: ScreenshotToolOptions): AnyTool {
  const folder = path.join(options.dataDir, 'screenshots');
  return defineTool({
    name: 'browser_screenshot',
    description:
      'Saves a PNG screenshot of the current browser page (or of one element by CSS selector) and returns ' +
      'its file path, size in bytes and pixel dimensions.',
    parameters: z.object({
      selector: z.string().min(1).optional().describe('CSS selector of an element to capture instead of the page'),
      fullPage: z.boolean().optional().describe('Capture the whole scrollable page, not just the viewport'),
    }),
    execute: async (args, ctx) =>
      options.sessions.use(ctx.sessionId, ctx.signal, async ({ page }) => {
        if (page.url() === 'about:blank') {
          throw new ToolExecutionError('no page is open in this session; call browser_navigate first');
        }
        mkdirSync(folder, { recursive: true, mode: 0o700 });
        const name = fileName(ctx.sessionId, options.clock());
        const file = path.join(folder, name);
        let png: Buffer;
        try {
          png = args.selector
            ? await page.locator(args.selector).first().screenshot({ path: file, timeout: options.actionTimeoutMs })
            : await page.screenshot({
                path: file,
                fullPage: args.fullPage ?? false,
                timeout: options.actionTimeoutMs,
              });
        } catch (error) {
          throw toolError('screenshot failed', error);
        }
        ctx.logger.info('browser_screenshot', {
          file: `screenshots/${name}`,
          bytes: png.length,
        });
        return {
          path: file,
          file: `screenshots/${name}`,
          bytes: png.length,
          ...pngSize(png),
          url: page.url(),
        };
      }),
  });
}
