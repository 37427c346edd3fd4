import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { testChromium } from './chromium';

/** Where the console tests save the screenshots the README shows. */
export const DOCS = path.resolve(__dirname, '..', '..', 'docs');

/** Debian's Chromium (or the test's), headless, as the console tests drive it. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: await testChromium(),
    args: ['--no-sandbox', '--disable-gpu'],
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
}

/** A page whose console errors and uncaught exceptions are collected in `errors`. */
export async function watchedPage(browser: Browser): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, errors };
}

/**
 * Opens the console: through the sign-in form with `token` (a node with
 * `a2a.auth`), else straight in (the loopback owner). The sign-in page's own
 * 401 is the browser's to log: `errors` is emptied once the console shows.
 */
export async function openConsole(page: Page, errors: string[], url: string, token?: string): Promise<void> {
  await page.goto(`${url}/console`);
  if (token) {
    await page.fill('#token', token);
    await Promise.all([page.waitForNavigation(), page.press('#token', 'Enter')]);
  }
  await page.locator('#live', { hasText: 'live' }).waitFor();
  errors.length = 0;
}

/** Shows one of the console's views by its tab. */
export async function showView(page: Page, view: 'chat' | 'tasks' | 'agents' | 'tools' | 'memory'): Promise<void> {
  await page.click(`#tab-${view}`);
  await page.waitForSelector(`#view-${view}:not([hidden])`);
}

/** axe-core's serious and critical WCAG 2.1 AA violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const loaded = await page.evaluate<boolean>("typeof axe !== 'undefined'");
  if (!loaded) await page.evaluate(fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  return page.evaluate<string[]>(`axe
    .run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa'] } })
    .then((result) => result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => v.id + ' (' + v.impact + ') x' + v.nodes.length + ': ' + v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')))`);
}

/**
 * The graph's edges that run through a box other than their own ends: each
 * edge is a polyline of axis-parallel segments; a segment crossing a node's
 * rectangle (shrunk by a pixel) is reported as `edge → node`.
 */
export async function edgesThroughBoxes(page: Page): Promise<{ edges: number; nodes: number; crossings: string[] }> {
  return page.evaluate<{ edges: number; nodes: number; crossings: string[] }>(`(() => {
    const nodes = [...document.querySelectorAll('#graph g.node')].map((g) => {
      const r = g.querySelector('rect');
      return { id: g.getAttribute('data-node'), x: +r.getAttribute('x'), y: +r.getAttribute('y'),
        w: +r.getAttribute('width'), h: +r.getAttribute('height') };
    });
    const crossings = [];
    const edges = [...document.querySelectorAll('#graph path.edge')];
    for (const edge of edges) {
      const from = edge.getAttribute('data-from'), to = edge.getAttribute('data-to');
      const points = edge.getAttribute('d').trim().split(/\\s+/).map((p) => p.slice(1).split(',').map(Number));
      for (let i = 1; i < points.length; i++) {
        const [x1, y1] = points[i - 1], [x2, y2] = points[i];
        const sx = Math.min(x1, x2), ex = Math.max(x1, x2), sy = Math.min(y1, y2), ey = Math.max(y1, y2);
        for (const n of nodes) {
          if (n.id === from || n.id === to) continue;
          const inside = ex > n.x + 1 && sx < n.x + n.w - 1 && ey > n.y + 1 && sy < n.y + n.h - 1;
          if (inside) crossings.push(from + '->' + to + ' through ' + n.id);
        }
      }
    }
    return { edges: edges.length, nodes: nodes.length, crossings };
  })()`);
}
