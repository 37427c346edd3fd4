import type { Locator, Page } from 'playwright-core';
import { z } from 'zod';
import { defineTool, type AnyTool } from '../../agent/tool';
import { ToolExecutionError } from '../../errors';
import { DEFAULT_MAX_CHARS, maxCharsArgument, readText, toolError } from './pageText';
import type { BrowserSessions } from './sessions';

/** Options for {@link createActionTool}. */
export interface ActionToolOptions {
  sessions: BrowserSessions;
  /** Default wait for a selector (`tools.browser.actionTimeoutMs`). */
  actionTimeoutMs: number;
}

/** Longest wait a model may ask for in one action. */
export const MAX_ACTION_TIMEOUT_MS = 60_000;

/** The arguments of `browser_action`; which ones an action needs is checked in {@link needs}. */
export const BrowserActionArgs = z.object({
  action: z.enum(['click', 'type', 'select', 'wait', 'read_text', 'read_element']),
  selector: z
    .string()
    .min(1)
    .optional()
    .describe(
      'CSS selector; the first match is used. read_text defaults to body; wait without it waits for network idle',
    ),
  text: z.string().optional().describe('type: the text to enter; wait: text the element must contain'),
  value: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('select: option value(s) or label(s) to select'),
  pressEnter: z.boolean().optional().describe('type: press Enter after typing'),
  timeoutMs: z
    .number()
    .int()
    .positive()
    .max(MAX_ACTION_TIMEOUT_MS)
    .optional()
    .describe('How long to wait for the element'),
  maxChars: maxCharsArgument('read_*: characters returned'),
});
export type BrowserActionArgs = z.infer<typeof BrowserActionArgs>;

function needs<K extends keyof BrowserActionArgs>(args: BrowserActionArgs, key: K): NonNullable<BrowserActionArgs[K]> {
  const value = args[key];
  if (value === undefined) throw new ToolExecutionError(`browser_action ${args.action} needs "${key}"`);
  return value as NonNullable<BrowserActionArgs[K]>;
}

/** Reads what the model needs to know about one element, in the page. */
async function describeElement(locator: Locator, maxChars: number, timeout: number): Promise<Record<string, unknown>> {
  await locator.waitFor({ state: 'attached', timeout });
  return locator.evaluate((el, max) => {
    const attributes: Record<string, string> = {};
    for (const attr of Array.from(el.attributes) as Array<{
      name: string;
      value: string;
    }>) {
      attributes[attr.name] = attr.value;
    }
    const field = el as unknown as { value?: unknown; checked?: unknown };
    return {
      tag: el.tagName.toLowerCase(),
      text: (el.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, max),
      html: el.outerHTML.slice(0, max),
      attributes,
      ...(typeof field.value === 'string' ? { value: field.value } : {}),
      ...(typeof field.checked === 'boolean' ? { checked: field.checked } : {}),
    };
  }, maxChars);
}

async function perform(page: Page, args: BrowserActionArgs, timeout: number): Promise<Record<string, unknown>> {
  const maxChars = args.maxChars ?? DEFAULT_MAX_CHARS;
  switch (args.action) {
    case 'click': {
      await page.locator(needs(args, 'selector')).first().click({ timeout });
      // A click that starts a navigation: let the new document arrive before reporting.
      await page.waitForLoadState('domcontentloaded', { timeout }).catch(() => {});
      return { url: page.url(), title: await page.title() };
    }
    case 'type': {
      const field = page.locator(needs(args, 'selector')).first();
      await field.fill(needs(args, 'text'), { timeout });
      const value = await field.inputValue({ timeout }).catch(() => undefined);
      if (args.pressEnter) {
        await field.press('Enter', { timeout });
        await page.waitForLoadState('domcontentloaded', { timeout }).catch(() => {});
      }
      return { value, url: page.url() };
    }
    case 'select': {
      const selected = await page
        .locator(needs(args, 'selector'))
        .first()
        .selectOption(needs(args, 'value'), { timeout });
      return { selected };
    }
    case 'wait': {
      const started = Date.now();
      if (args.selector === undefined) {
        await page.waitForLoadState('networkidle', { timeout });
      } else {
        const target = page.locator(args.selector, args.text === undefined ? undefined : { hasText: args.text });
        await target.first().waitFor({ state: 'visible', timeout });
      }
      return { waitedMs: Date.now() - started };
    }
    case 'read_text': {
      const locator = page.locator(args.selector ?? 'body');
      const count = await locator.count();
      if (count === 0) throw new ToolExecutionError(`no element matches ${args.selector ?? 'body'}`);
      return { ...(await readText(locator, maxChars, timeout)), count };
    }
    case 'read_element': {
      const locator = page.locator(needs(args, 'selector'));
      const element = await describeElement(locator.first(), maxChars, timeout);
      return {
        ...element,
        visible: await locator.first().isVisible(),
        count: await locator.count(),
      };
    }
  }
}

/**
 * `browser_action`: one interaction with the session's current page by CSS
 * selector — click, type, select, wait, read text, read an element — each
 * bounded by a timeout.
 * @example
 * const action = createActionTool({ sessions, actionTimeoutMs: 5_000 });
 */
export function createActionTool(options: ActionToolOptions): AnyTool {
  return defineTool({
    name: 'browser_action',
    description:
      'Acts on the page opened with browser_navigate, by CSS selector: click, type (text, optional pressEnter), ' +
      'select (value), wait (for a selector, optionally containing text), read_text, read_element ' +
      '(tag, text, attributes, value). Returns what happened and the page url.',
    parameters: BrowserActionArgs,
    execute: async (args, ctx) =>
      options.sessions.use(ctx.sessionId, ctx.signal, async ({ page, proxy, pageRefusalsSince }) => {
        const mark = proxy.refusalCount();
        const timeout = args.timeoutMs ?? options.actionTimeoutMs;
        let result: Record<string, unknown>;
        try {
          result = await perform(page, args, timeout);
        } catch (error) {
          throw toolError(`${args.action}${args.selector ? ` ${args.selector}` : ''} failed`, error);
        }
        const blocked = pageRefusalsSince(mark);
        return {
          action: args.action,
          ...result,
          ...(blocked.length > 0 ? { blocked: blocked.slice(0, 10) } : {}),
        };
      }),
  });
}
