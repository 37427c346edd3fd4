import { errorMessage } from '../../errors';
import { createHmac, randomUUID } from 'node:crypto';
import type { StreamResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import {
  V1PushNotificationSerializer,
  type PushNotificationSender,
  type PushNotificationSerializer,
  type PushNotificationStore,
  type ServerCallContext,
  type StoredPushNotificationConfig,
} from '@a2a-js/sdk/server';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { fetch as undiciFetch, type Agent } from 'undici';
import type { Logger } from '../../log/logger';
import { invalidParam } from '../../protocol/errorDetails';
import { parseIp } from '../../net/address';
import { createDeadline } from '../../net/deadline';
import { createPinnedAgent } from '../../net/dispatcher';
import { createOutboundPolicy, OutboundRefusedError, type Lookup, type OutboundPolicy } from '../../net/policy';
import { classifyAddress } from '../../net/ranges';
import { redactJsonText, type Redact } from '../../log/redactJson';
import type { PushDelivery } from '../../store/taskRows';

/**
 * Push notifications: webhook URLs are checked when registered and again
 * when delivered, through the outbound address policy (src/net): the
 * connection goes to the very address that was checked, so a caller cannot
 * aim the node at its own network, by any spelling or by DNS rebinding; deliveries are retried with backoff; each carries the caller's
 * token (or `authentication`) and an HMAC signature of the body keyed by
 * that token, which the receiver can check. As A2A §13.2 asks: the
 * configured `authentication` goes with every notification, each attempt
 * has a deadline of 10–30 s, retries are bounded with exponential backoff,
 * and how the latest notification went is recorded on its config, where
 * its owner reads it (`pushDeliveries.ts`).
 */

/** A push store that can record deliveries on the configs (the node's row store; the SDK's stores cannot). */
export interface DeliveryRecorder {
  recordDelivery(taskId: string, context: ServerCallContext, configId: string, delivery: PushDelivery): Promise<void>;
}

/** A push store whose loads carry the wire version (and the latest delivery) of each config. */
type MetadataPushStore = PushNotificationStore & Required<Pick<PushNotificationStore, 'loadWithMetadata'>>;

/** Whether an IP address (any spelling) is anything but public: the outbound policy's classification (src/net). */
export function isPrivateAddress(ip: string): boolean {
  const parsed = parseIp(ip);
  return !parsed || classifyAddress(parsed).scope !== 'public';
}

/** The outbound address policy for webhooks: public addresses only, unless `allowPrivateNetworks` opens the rest. */
export function pushPolicy(allowPrivateNetworks: boolean, lookup?: Lookup): OutboundPolicy {
  return createOutboundPolicy({
    allowPrivateNetworks,
    setting: 'a2a.pushNotifications.allowPrivateNetworks',
    lookup,
  });
}

/**
 * Checks a webhook URL as registered; throws the SDK's RequestMalformedError
 * (-32602 / HTTP 400, the field `url`) naming what is wrong. Literal addresses in every
 * spelling (`[::ffff:7f00:1]`, `0x7f.1`) and `localhost` are judged now;
 * names are judged again on the resolved addresses at each delivery.
 */
export function checkPushUrl(raw: string, allowPrivateNetworks: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidParam('url', `is not a URL: ${JSON.stringify(raw.slice(0, 200))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalidParam('url', `must be http(s), not ${url.protocol}`);
  }
  if (url.username || url.password) throw invalidParam('url', 'must not carry credentials');
  const verdict = pushPolicy(allowPrivateNetworks).checkLiteral(url.hostname);
  if (!verdict.ok) {
    throw invalidParam('url', `points at a private or loopback address: ${verdict.reason}`);
  }
  return url;
}

/** A push store that refuses bad webhook URLs before saving them. */
export class CheckedPushStore implements PushNotificationStore, DeliveryRecorder {
  private readonly inner: MetadataPushStore & Partial<DeliveryRecorder>;
  private readonly allowPrivateNetworks: boolean;

  constructor(options: {
    inner: MetadataPushStore & Partial<DeliveryRecorder>;
    /** Webhooks on loopback and private networks are accepted (the outbound policy's own switch). */
    allowPrivateNetworks: boolean;
  }) {
    this.inner = options.inner;
    this.allowPrivateNetworks = options.allowPrivateNetworks;
  }

  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    checkPushUrl(config.url, this.allowPrivateNetworks);
    // v0.3 peers set one config per task without an id and read it back as `default`; v1.0 callers get a generated id.
    if (!config.id && context.requestedVersion === '0.3') config.id = 'default';
    return this.inner.save(taskId, context, config);
  }
  load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return this.inner.load(taskId, context);
  }
  loadWithMetadata(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    return this.inner.loadWithMetadata(taskId, context);
  }
  delete(taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    return this.inner.delete(taskId, context, configId);
  }
  async recordDelivery(taskId: string, context: ServerCallContext, configId: string, delivery: PushDelivery) {
    await this.inner.recordDelivery?.(taskId, context, configId, delivery);
  }
}

/** Options for {@link RetryingPushSender}. */
export interface PushSenderOptions {
  /** Where the configs are read, and each delivery's outcome recorded when it can be. */
  store: PushNotificationStore & Partial<DeliveryRecorder>;
  logger: Logger;
  allowPrivateNetworks: boolean;
  maxAttempts: number;
  /** First retry delay; doubles per attempt (capped at 30 s). */
  baseDelayMs?: number;
  /** Deadline of one attempt (`a2a.pushNotifications.timeoutMs`: 10–30 s, as §13.2 recommends; tests shorten it). */
  timeoutMs?: number;
  /** The resolver behind the outbound address policy; injected in tests (no real DNS). */
  lookup?: Lookup;
  /** Masks known secret values in every payload (the node's redactor). */
  redact?: Redact;
}

/** Header carrying `sha256=<hex HMAC of the body keyed by the config's token>`. */
export const SIGNATURE_HEADER = 'X-Lango-Signature';
/** Header carrying the legacy A2A token. */
export const TOKEN_HEADER = 'X-A2A-Notification-Token';

/**
 * Delivers task events to the registered webhooks, in order per task,
 * without blocking the request path (the SDK awaits `send`).
 * @example
 * const sender = new RetryingPushSender({ store, logger, allowPrivateNetworks: false, maxAttempts: 5 });
 */
export class RetryingPushSender implements PushNotificationSender {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly stop = new AbortController();
  private readonly serializers: Record<string, PushNotificationSerializer> = {
    '1.0': new V1PushNotificationSerializer(),
    '0.3': new V03PushNotificationSerializer(),
  };

  /** Every delivery connects through the outbound address policy, to the very addresses it checked. */
  private readonly dispatcher: Agent;

  constructor(private readonly options: PushSenderOptions) {
    this.dispatcher = createPinnedAgent({ policy: pushPolicy(options.allowPrivateNetworks, options.lookup) });
  }

  async send(streamResponse: StreamResponse, context: ServerCallContext, task?: Task): Promise<void> {
    const taskId = taskIdOf(streamResponse);
    if (!taskId || this.stop.signal.aborted) return;
    const previous = this.chains.get(taskId) ?? Promise.resolve();
    const next = previous
      .then(() => this.deliverAll(taskId, streamResponse, context, task))
      .catch((err) => {
        this.options.logger.warn('push notification dispatch failed', { taskId, error: String(err) });
      });
    this.chains.set(taskId, next);
    void next.finally(() => {
      if (this.chains.get(taskId) === next) this.chains.delete(taskId);
    });
  }

  /** Waits for queued deliveries (tests) or, with `abort`, drops pending retries (shutdown). */
  async close(abort = true): Promise<void> {
    if (abort) this.stop.abort();
    await Promise.all([...this.chains.values()]);
    if (abort) await this.dispatcher.destroy();
  }

  private async deliverAll(taskId: string, event: StreamResponse, context: ServerCallContext, task?: Task) {
    const store = this.options.store;
    const configs = store.loadWithMetadata
      ? await store.loadWithMetadata(taskId, context)
      : (await store.load(taskId, context)).map((config) => ({ config, wireVersion: '1.0' }));
    for (const { config, wireVersion } of configs) {
      const serializer = this.serializers[wireVersion] ?? this.serializers['1.0'];
      const { body, contentType } = serializer.serialize(event, task);
      // A webhook is outside the node: no secret value leaves in a payload (issue 11 G).
      const { redact } = this.options;
      const delivery = await this.deliver(config, redact ? redactJsonText(body, redact) : body, contentType);
      if (delivery) {
        await store.recordDelivery?.(taskId, context, config.id, delivery).catch((err: unknown) => {
          this.options.logger.warn('push delivery not recorded', { taskId, error: errorMessage(err) });
        });
      }
    }
  }

  /** Sends one notification, retrying as configured; how it went (undefined when the node stopped first). */
  private async deliver(
    config: TaskPushNotificationConfig,
    body: string,
    contentType: string,
  ): Promise<PushDelivery | undefined> {
    const { logger, maxAttempts, baseDelayMs = 200, timeoutMs = 15_000 } = this.options;
    const ended = (outcome: PushDelivery['outcome'], attempts: number, status?: number, error?: string) => ({
      outcome,
      attempts,
      ...(status !== undefined ? { status } : {}),
      ...(error !== undefined ? { error } : {}),
      at: new Date().toISOString(),
    });
    const url = checkPushUrl(config.url, this.options.allowPrivateNetworks);
    const headers: Record<string, string> = { 'Content-Type': contentType, 'X-Lango-Delivery': randomUUID() };
    if (config.authentication?.scheme) {
      headers.Authorization = `${config.authentication.scheme} ${config.authentication.credentials}`.trim();
    }
    if (config.token) {
      headers[TOKEN_HEADER] = config.token;
      headers[SIGNATURE_HEADER] = `sha256=${createHmac('sha256', config.token).update(body).digest('hex')}`;
    }
    for (let attempt = 1; attempt <= maxAttempts && !this.stop.signal.aborted; attempt++) {
      let outcome: string;
      let status: number | undefined;
      // Held by its own timer: a receiver that never answers fails this attempt after timeoutMs, on Node 20 too.
      const deadline = createDeadline(timeoutMs, this.stop.signal);
      try {
        const response = await undiciFetch(url, {
          method: 'POST',
          headers,
          body,
          redirect: 'manual',
          dispatcher: this.dispatcher,
          signal: deadline.signal,
        });
        // The receiver's answer is not needed: never read it (it could be endless).
        await response.body?.cancel().catch(() => undefined);
        status = response.status;
        if (response.ok) return ended('delivered', attempt, status);
        outcome = `HTTP ${response.status}`;
        // Refused (4xx) or redirected (not followed: the target was never checked): retrying will not help.
        if (response.status < 500 && response.status !== 408 && response.status !== 429) {
          logger.warn('push notification refused by receiver', { url: url.origin, status: response.status });
          return ended('refused', attempt, status, outcome);
        }
      } catch (err) {
        const refused = (err as { cause?: unknown }).cause;
        if (refused instanceof OutboundRefusedError) {
          logger.warn('push notification refused by the outbound address policy', {
            url: url.origin,
            reason: refused.message,
          });
          return ended('refused', attempt, undefined, refused.message);
        }
        outcome = errorMessage(err);
      } finally {
        deadline.clear();
      }
      if (attempt === maxAttempts) {
        logger.warn('push notification undeliverable', { url: url.origin, attempts: attempt, last: outcome });
        return ended('failed', attempt, status, outcome);
      }
      await sleep(Math.min(baseDelayMs * 2 ** (attempt - 1), 30_000), this.stop.signal);
    }
    return undefined;
  }
}

function taskIdOf(event: StreamResponse): string | undefined {
  const payload = event.payload;
  if (!payload) return undefined;
  switch (payload.$case) {
    case 'task':
      return payload.value.id;
    case 'message':
      return payload.value.taskId || undefined;
    case 'statusUpdate':
    case 'artifactUpdate':
      return payload.value.taskId;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
