import type { Access, AccessRefusal, Identity } from '../../identity/identity';
import type { Principal } from '../../principal';
import { INVALID_REQUEST, InboundRefusal, type InboundCall, type Step } from './inbound';

/**
 * The identity step of the inbound chain, for every binding and page: the
 * identity component says who the call is (`identity.principal`) and
 * whether that principal may call a route of `access`
 * (`identity.refusal`); the call runs as that principal, or is refused 401
 * (with the challenge) or 403. A public route reads no credential: its call
 * stays anonymous.
 * @example
 * const identify = identityStep(identity);
 * const run = compose([...shared, ...(identify('caller') ? [identify('caller')!] : []), answer]);
 */
export function identityStep(identity: Identity): (access: Access) => Step | undefined {
  const steps = new Map<Access, Step | undefined>();
  const refusalOf = (refusal: AccessRefusal) =>
    refusal.status === 401
      ? new InboundRefusal(401, INVALID_REQUEST, refusal.message, {
          headers: { 'WWW-Authenticate': identity.challenge },
          restStatus: 'UNAUTHENTICATED',
        })
      : new InboundRefusal(403, INVALID_REQUEST, refusal.message, { restStatus: 'PERMISSION_DENIED' });
  const build = (access: Access): Step | undefined => {
    if (access === 'public') return undefined;
    const admit = (call: InboundCall, principal: Principal | undefined, next: () => Promise<void>) => {
      const refusal = identity.refusal(access, principal);
      if (refusal) throw refusalOf(refusal);
      call.principal = principal!;
      call.subjectToken = identity.subjectToken(call);
      return next();
    };
    return (call, next) => {
      const principal = identity.principal(call);
      return principal instanceof Promise
        ? principal.then((found) => admit(call, found, next))
        : admit(call, principal, next);
    };
  };
  return (access) => {
    if (!steps.has(access)) steps.set(access, build(access));
    return steps.get(access);
  };
}
