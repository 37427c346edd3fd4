import type { User } from '@a2a-js/sdk/server';
import { INVALID_REQUEST, InboundRefusal, type InboundCall, type Step } from './inbound';
import type { CallerRequest } from '../../identity/request';

/**
 * Who a request's caller is, possibly after I/O (an OIDC validator fetching its keys): the caller, or undefined
 * when the request presents no valid credential.
 */
export type Authenticate = (req: CallerRequest) => User | undefined | Promise<User | undefined>;

const AUTH_REQUIRED = 'authentication required: present a valid bearer token or API key';

/**
 * The credential step of the inbound chain, for every binding: the caller `authenticate` finds becomes the
 * call's user; a request it finds none for is refused with 401 and `challenge` in `WWW-Authenticate`.
 * @example
 * const step = credentials({ authenticate: (req) => auth.authenticate(req), challenge: auth.challenge });
 */
export function credentials(options: { authenticate: Authenticate; challenge: string }): Step {
  const refusal = () =>
    new InboundRefusal(401, INVALID_REQUEST, AUTH_REQUIRED, {
      headers: { 'WWW-Authenticate': options.challenge },
      restStatus: 'UNAUTHENTICATED',
    });
  const admit = (call: InboundCall, user: User | undefined, next: () => Promise<void>): Promise<void> => {
    if (!user) throw refusal();
    call.user = user;
    return next();
  };
  return (call, next) => {
    const user = options.authenticate(call);
    return user instanceof Promise ? user.then((found) => admit(call, found, next)) : admit(call, user, next);
  };
}
