import { errorMessage } from '../errors';
import { OutboundRefusedError } from '../net/policy';
import { describeNetworkError } from './cardFetch';
import type { PeerCallMeter } from './peerFetch';
import { isProtocolError } from './remoteClient';
import { causeChain, isNetworkError } from './streamResume';

/**
 * Names why a call failed from what its meter saw (issue 12): the peer's
 * own A2A error is a rejection (it is alive and does not count against the
 * circuit); a policy refusal or a failure before any answer is
 * "unreachable"; anything the peer answered that could not be used is an
 * "invalid answer", whatever the SDK made of it.
 */
export function nameFault(error: unknown, meter: PeerCallMeter): { reason: string; counts: boolean } {
  if (meter.invalid) return { reason: `invalid answer: ${meter.invalid}`, counts: true };
  if (meter.rejected) {
    return {
      reason: `rejected the request: ${isProtocolError(error) ? shortError(error) : meter.rejected}`,
      counts: false,
    };
  }
  const refused = causeChain(error).find((e) => e instanceof OutboundRefusedError);
  if (refused) return { reason: `unreachable: ${errorMessage(refused)}`, counts: true };
  if (!meter.responded) return { reason: `unreachable: ${describeNetworkError(error)}`, counts: true };
  if (isNetworkError(error))
    return { reason: `invalid answer: cut off (${describeNetworkError(error)})`, counts: true };
  return { reason: `invalid answer: ${shortError(error)}`, counts: true };
}

/** An error's message, cut short for a reason shown to a person. */
export function shortError(error: unknown): string {
  return errorMessage(error).slice(0, 300);
}
