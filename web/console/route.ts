/**
 * The console's address: `#view=<view>&…` names the view and what it
 * shows (`task`, `turn`, `step` in tasks; `conversation` and `caller` in
 * chat; `agent`; `tool`; `caller` in memory). Every way to move (a tab, a
 * link, a button, the back button, an address typed or pasted at any time)
 * changes the hash, and one handler follows it (`hashchange`). The old
 * `#tasks` form still opens its view.
 */

export const VIEWS = ['chat', 'tasks', 'agents', 'tools', 'memory'] as const;
export type View = (typeof VIEWS)[number];

/** Where the console is: a view and what it shows. */
export interface Route {
  view: View;
  params: URLSearchParams;
}

export const isView = (name: string | null): name is View => (VIEWS as readonly (string | null)[]).includes(name);

/** The route the address names (an unknown or missing view is the chat). */
export function currentRoute(): Route {
  const hash = location.hash.slice(1);
  if (isView(hash)) return { view: hash, params: new URLSearchParams() };
  const params = new URLSearchParams(hash);
  const view = params.get('view');
  params.delete('view');
  return { view: isView(view) ? view : 'chat', params };
}

/** The address of a view showing `params` (empty values left out). */
export function linkTo(view: View, params: Record<string, string | number | undefined> = {}): string {
  const query = new URLSearchParams({ view });
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== '') query.set(name, String(value));
  return `#${query.toString()}`;
}

let follow: (route: Route) => void = () => {};

/** Goes to a view showing `params`: a new history entry, followed as any change of the address is. */
export function go(view: View, params: Record<string, string | number | undefined> = {}): void {
  const hash = linkTo(view, params);
  if (location.hash === hash) follow(currentRoute());
  else location.hash = hash;
}

/** Follows the address now and at every change of it. */
export function startRouting(handler: (route: Route) => void): void {
  follow = handler;
  window.addEventListener('hashchange', () => follow(currentRoute()));
  follow(currentRoute());
}
