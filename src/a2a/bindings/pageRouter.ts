import express, { type RequestHandler } from 'express';
import type { Access, Pages, RouteSpec } from './routes';

/** A route of a page module: its methods and path, and, where they differ from the module's, its access and name. */
export interface PageRouteOptions {
  readonly methods: readonly ('GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE')[];
  /** Express's spelling (`/console/api/agents/:name/card`): each `:param` is one segment of the table's row. */
  readonly path: string;
  readonly access?: Access;
  readonly name?: string;
}

/** Declares a page module's routes once: each is a row of the route table and a route of the express router. */
export interface PageRouter {
  get(path: string, ...handlers: RequestHandler[]): void;
  post(path: string, ...handlers: RequestHandler[]): void;
  delete(path: string, ...handlers: RequestHandler[]): void;
  add(route: PageRouteOptions, ...handlers: RequestHandler[]): void;
  /** The rows and the router, for the route table (`httpRoutes.ts`). */
  pages(): Pages;
}

/**
 * A page module's router: every route added is one row of the node's route
 * table (which decides its spelling and who may call it, before express runs)
 * and one route of an express router rendering it — case-sensitive and
 * strict, so express never widens what the table matched.
 * @example
 * const routes = pageRouter({ name: 'console', access: 'owner' });
 * routes.get('/console/api/agents', (_req, res) => res.json(graph()));
 * routes.add({ methods: ['POST'], path: '/console/login', access: 'public' }, signIn);
 * const pages = routes.pages(); // { routes: [...rows], router }
 */
export function pageRouter(defaults: { name: string; access: Access; refuse?: Pages['refuse'] }): PageRouter {
  const router = express.Router({ caseSensitive: true, strict: true });
  const rows: RouteSpec[] = [];
  const add = (route: PageRouteOptions, ...handlers: RequestHandler[]) => {
    rows.push({
      methods: route.methods,
      path: tablePath(route.path),
      binding: 'http',
      name: route.name ?? defaults.name,
      access: route.access ?? defaults.access,
    });
    for (const method of route.methods) {
      if (method === 'HEAD') continue; // express answers HEAD with its GET route
      router[method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](route.path, ...handlers);
    }
  };
  return {
    get: (path, ...handlers) => add({ methods: ['GET'], path }, ...handlers),
    post: (path, ...handlers) => add({ methods: ['POST'], path }, ...handlers),
    delete: (path, ...handlers) => add({ methods: ['DELETE'], path }, ...handlers),
    add,
    pages: () => ({ routes: [...rows], router, refuse: defaults.refuse }),
  };
}

/** An express path as the table's pattern: `:param` segments become `{param}`. */
function tablePath(path: string): string {
  return path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? `{${segment.slice(1)}}` : segment))
    .join('/');
}
