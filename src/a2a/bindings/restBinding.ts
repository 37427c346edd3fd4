import type { IncomingMessage } from 'node:http';
import express from 'express';
import { A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, User } from '@a2a-js/sdk/server';
import { restHandler } from '@a2a-js/sdk/server/express';
import type { Logger } from '../../log/logger';
import { jsonErrors, notFound } from './errors';
import type { HttpCall } from './httpCall';
import { invalidParam } from '../../protocol/errorDetails';
import type { Step } from './inbound';
import { ANONYMOUS } from '../../identity/request';
import { nestingProblem } from './jsonDepth';
import { messageViolation, SendMessageParamsV1 } from './messageSchema';
import { restResponses } from './restResponses';

/** Options of {@link restBinding}. */
export interface RestBindingOptions {
  requestHandler: A2ARequestHandler;
  /** `a2a.legacyCompat`: the v0.3 REST routes under `/v1` too. */
  legacyCompat: boolean;
  logger: Logger;
}

/** HTTP+JSON: the last steps of its chain. */
export interface RestBinding {
  /** After the body step: a message's raw shape, before the SDK's reader coerces it. */
  readonly checkMessage: Step<HttpCall>;
  /** The SDK's REST handler, with the spec's statuses and media type (`restResponses.ts`). */
  readonly answer: Step<HttpCall>;
}

/** The REST paths that carry a message, with or without a tenant prefix. */
const REST_MESSAGE_PATH = /\/message:(send|stream)$/;
const VERSION_HEADER = A2A_VERSION_HEADER.toLowerCase();

/**
 * The HTTP+JSON binding after the shared steps: the message check, then the
 * SDK's express `restHandler` (v1.0, and v0.3 with `legacyCompat`), which finds
 * the body already parsed by the chain's body step (its own parser skips a
 * read request) and the caller the credential step found.
 * @example
 * const rest = restBinding({ requestHandler, legacyCompat: true, logger });
 * const run = compose([...shared, jsonBody({ maxBodyBytes, mediaTypes: REST_MEDIA_TYPES }), rest.checkMessage, rest.answer]);
 */
export function restBinding(options: RestBindingOptions): RestBinding {
  // The call each request belongs to, for the SDK's `userBuilder`, which is given the request alone.
  const calls = new WeakMap<IncomingMessage, HttpCall>();
  const userBuilder = async (req: IncomingMessage): Promise<User> => calls.get(req)?.user ?? ANONYMOUS;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(
    restResponses(),
    restHandler({
      requestHandler: options.requestHandler,
      userBuilder,
      legacyCompat: { enabled: options.legacyCompat },
    }),
  );
  app.use(notFound);
  app.use(jsonErrors(options.logger));

  return {
    checkMessage: (call, next) => {
      const body = call.body;
      if (call.method !== 'POST' || body === undefined || !REST_MESSAGE_PATH.test(call.path)) return next();
      const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
      // v0.3 REST speaks another shape (the compat layer reads it); only its envelope is checked here.
      const problem = !isObject
        ? 'the request body must be a JSON object with a message'
        : nestingProblem(body, 'the request body');
      if (problem) throw new RequestMalformedError(problem);
      const violation = call.header(VERSION_HEADER) === '1.0' ? messageViolation(SendMessageParamsV1, body) : undefined;
      // The field named in a google.rpc.BadRequest (§11.6), as the handler's own checks name theirs.
      if (violation) throw invalidParam(violation.field, violation.description);
      return next();
    },
    answer: (call) => {
      calls.set(call.req, call);
      (call.req as IncomingMessage & { body?: unknown }).body = call.body;
      app(call.req, call.res);
    },
  };
}
