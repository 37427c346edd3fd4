import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { ServerCallContext } from '@a2a-js/sdk/server';

/**
 * A2A v1.0 tenants (`AgentInterface.tenant`, the `tenant` field of every
 * request, `/{tenant}/…` REST routes): the node serves the tenants of
 * `a2a.tenants`, each a scope of its own — its tasks by the task rows'
 * tenant column, every other store by the principal's tenant-qualified id
 * (`principal.ts` `inTenant`). The spec leaves the meaning of a tenant to
 * the server and names no error for one it does not serve; the node answers
 * TaskNotFound (JSON-RPC -32001, HTTP 404, gRPC NOT_FOUND), as for any
 * resource the caller cannot see. A request naming no tenant is the node's
 * own scope, as without tenants.
 */

/**
 * The refusal of a request naming a tenant outside `tenants` (a request
 * naming none is the node's own scope), for the request gate every binding
 * passes.
 * @example
 * const requestHandler = gatedRequests(taskHandler, tenantRefusal(config.a2a.tenants));
 */
export function tenantRefusal(tenants: readonly string[]): (context: ServerCallContext) => Error | undefined {
  const served = new Set(tenants);
  return ({ tenant }) =>
    tenant && !served.has(tenant) ? new TaskNotFoundError(`tenant "${tenant}" is not served here`) : undefined;
}
