import { randomUUID } from 'node:crypto';
import { setTimeout as sleepFor } from 'node:timers/promises';
import type { z } from 'zod';
import {
  type Action,
  type OpenAnswer,
  type OpenBody,
  openAnswerSchema,
  type RequestAnswer,
  type RequestBody,
  requestAnswerSchema,
  type StatusAnswer,
  statusAnswerSchema,
} from '../../shared/company-api/calls.js';
import { type TriggerAnswer, triggerAnswerSchema } from '../../shared/company-api/event-calls.js';
import type { EventKind } from '../../shared/company-api/events.js';
import {
  type SandboxAnswerBody,
  type SandboxBody,
  sandboxAnswerSchema,
} from '../../shared/company-api/sandbox-calls.js';
import { strictPublicKeyFromBase64, type VerifyKey } from '../../shared/crypto/ed25519.js';
import { OPEN_ANSWER_LIMIT_MS } from '../../shared/limits.js';
import { answerError, type CallFacts, errorCodeOf, readSuccess } from './answers.js';
import { attemptHeaders, type ClientAuth, callBody } from './call-auth.js';
import { type ListenedEvent, readEventStream } from './event-stream.js';
import { GatelinkError } from './gatelink-error.js';
import { type Attempt, exchange, networkError, parseJson } from './http-exchange.js';
import {
  backoffMs,
  type CallTraits,
  DEFAULT_RETRY,
  type Outcome,
  parseRetryAfter,
  type RetrySettings,
  shouldRetry,
} from './retry-policy.js';

/** Why `waitForAccess` stops waiting, for each state a request ends in without access. */
const WAIT_ENDS = {
  expired: (code: string) => `Request ${code} expired before the customer granted access.`,
  revoked: (code: string) => `The customer withdrew access of request ${code}.`,
  declined: (code: string) => `The customer declined request ${code}.`,
} as const;

/**
 * A typed client for the company API (cloud/README.md, "The TypeScript client"; docs/design.md section 11.6).
 * It imports only shared/ and Node's built-ins, so that what it sends is what the cloud's own schemas accept.
 */
export interface GatelinkClientOptions {
  /** Where the cloud answers, e.g. `https://gatelink.example`; the path is added. */
  baseUrl: string;
  /**
   * `readKeyFile('company-key.json')` to sign, or `{ orgId, secret }` for a company without a domain. A program
   * that only receives events may leave it out: `webhookKey()` sends no credentials, and a call then throws.
   */
  auth?: ClientAuth;
  /**
   * Every call goes to your sandbox (cloud/README.md, "The sandbox"): `"sandbox": true` in each body, and in
   * secret mode your sandbox secret as `auth`.
   */
  sandbox?: boolean;
  /** Attempts after the first (default 3). */
  retries?: number;
  /** The longest wait for one attempt's answer (default 30 s: an opening may wait 8 s for the gate). */
  timeoutMs?: number;
  /**
   * The longest wait for one `open` attempt's answer (default 138 s): a customer who approves each opening may
   * take up to 120 s to answer, and the gate 8 s more (cloud/README.md, "Opening").
   */
  openTimeoutMs?: number;
  /** Longest Retry-After the client waits itself (default 60 s); a longer one is the caller's to wait. */
  maxRetryAfterMs?: number;
  fetch?: typeof fetch;
  /** Waits between attempts and polls; tests pass one that does not wait. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform in [0, 1), for the backoff's jitter. */
  random?: () => number;
  /** Milliseconds since the epoch, for signatures and an HTTP-date Retry-After. */
  now?: () => number;
  userAgent?: string;
}

export interface CallOptions {
  /**
   * The call's Idempotency-Key: made (a UUID) when not given and sent on every retry of the call; `false` sends
   * none, so that the client does not retry once the call may have reached the cloud.
   */
  idempotencyKey?: string | false;
  signal?: AbortSignal;
}

export interface WaitOptions {
  /** Between two `status` calls (default 2 s). */
  intervalMs?: number;
  signal?: AbortSignal;
}

type KeyObject = { number_id: number; label: string };

/** A request the customer granted: what `open` needs is there, and at least one object (consent asks for one). */
export type IssuedStatus = StatusAnswer & {
  state: 'issued';
  key_ref: number;
  issued_at: string;
  numbers: [KeyObject, ...KeyObject[]];
};

const DEFAULT_TIMEOUT_MS = 30_000;
/** The cloud's own limit for an `open`, and a margin for the network and a busy cloud. */
const DEFAULT_OPEN_TIMEOUT_MS = OPEN_ANSWER_LIMIT_MS + 10_000;
const DEFAULT_POLL_MS = 2000;
const DEFAULT_USER_AGENT = `gatelink-client/1 node/${process.versions.node}`;

export class GatelinkClient {
  readonly #baseUrl: string;
  readonly #auth: ClientAuth | undefined;
  readonly #sandbox: boolean;
  readonly #retry: RetrySettings;
  readonly #timeoutMs: number;
  readonly #openTimeoutMs: number;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #userAgent: string;

  constructor(options: GatelinkClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#auth = options.auth;
    this.#sandbox = options.sandbox === true;
    this.#retry = {
      ...DEFAULT_RETRY,
      ...(options.retries === undefined ? {} : { retries: options.retries }),
      ...(options.maxRetryAfterMs === undefined ? {} : { maxRetryAfterMs: options.maxRetryAfterMs }),
    };
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#openTimeoutMs = options.openTimeoutMs ?? Math.max(DEFAULT_OPEN_TIMEOUT_MS, this.#timeoutMs);
    this.#fetch = options.fetch ?? fetch;
    this.#sleep = options.sleep ?? ((ms, signal) => sleepFor(ms, undefined, signal ? { signal } : {}));
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
    this.#userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  }

  /** A new access request; show its `url` to the customer as a QR code. */
  request(body: RequestBody = {}, options: CallOptions = {}): Promise<RequestAnswer> {
    return this.#call('request', body, requestAnswerSchema, options);
  }

  /** The request's state (cloud/README.md, "`status` fields"). Reads only, so it is always safe to retry. */
  status(code: string, options: Pick<CallOptions, 'signal'> = {}): Promise<StatusAnswer> {
    return this.#call('status', { code }, statusAnswerSchema, { ...options, idempotencyKey: false });
  }

  /** Opens an object of a granted key, for a named employee; resolves once the controller confirmed it. */
  open(body: OpenBody, options: CallOptions = {}): Promise<OpenAnswer> {
    return this.#call('open', body, openAnswerSchema, options);
  }

  /**
   * A sample event of `kind`, delivered to your callback address and your `listen` streams like any event
   * (cloud/README.md, "Trying events"). Not retried on a lost answer: a second sample would only be a second.
   */
  trigger(kind: EventKind, options: Pick<CallOptions, 'signal'> = {}): Promise<TriggerAnswer> {
    return this.#call('trigger', { type: kind }, triggerAnswerSchema, { ...options, idempotencyKey: false });
  }

  /**
   * Your events from now on, each as the delivery your callback address gets (headers and body, signed), until
   * `signal` aborts or the cloud closes the stream; refused as any call is, with a GatelinkError. Only the answer's
   * headers are awaited within the client's timeout: the stream itself may stay quiet for as long as you listen.
   */
  async *listen(options: Pick<CallOptions, 'signal'> = {}): AsyncGenerator<ListenedEvent> {
    const auth = this.#needAuth('listen');
    const body = callBody(auth, this.#fields({}));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'user-agent': this.#userAgent,
      ...attemptHeaders(auth, body, this.#now()),
    };
    const url = `${this.#baseUrl}/api/company.php?a=listen`;
    const facts = { attempts: 1, idempotencyKey: undefined };
    const answered = AbortSignal.timeout(this.#timeoutMs);
    const gone = new AbortController();
    const signal = AbortSignal.any([gone.signal, ...(options.signal ? [options.signal] : [])]);
    let response: Response;
    try {
      response = await this.#fetch(url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.any([signal, answered]),
      });
    } catch (error) {
      options.signal?.throwIfAborted();
      throw networkError({ kind: 'no_answer', sent: 'maybe', cause: error }, facts);
    }
    const requestId = response.headers.get('x-request-id') ?? undefined;
    if (response.status !== 200 || !response.body) {
      const json = parseJson(await response.text());
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), this.#now());
      throw answerError({ status: response.status, json, requestId, retryAfterMs }, facts);
    }
    try {
      yield* readEventStream(response.body, requestId);
    } catch (error) {
      options.signal?.throwIfAborted();
      if (error instanceof GatelinkError) throw error;
      throw networkError({ kind: 'no_answer', sent: 'maybe', cause: error }, facts);
    } finally {
      gone.abort();
    }
  }

  /**
   * Polls `status` until the customer grants access. A request that ends otherwise throws a GatelinkError with
   * code `expired`, `revoked` or `declined` (status 200: the answer that said so).
   */
  async waitForAccess(code: string, options: WaitOptions = {}): Promise<IssuedStatus> {
    const intervalMs = options.intervalMs ?? DEFAULT_POLL_MS;
    for (;;) {
      const status = await this.status(code, options.signal ? { signal: options.signal } : {});
      if (isIssued(status)) return status;
      if (status.state === 'issued') {
        // A key is granted on at least one object (docs/design.md section 10.3); anything else is not the API.
        throw new GatelinkError({
          code: 'unexpected_answer',
          status: 200,
          message: `Request ${status.code} is issued without key_ref or numbers.`,
          attempts: 1,
        });
      }
      if (status.state === 'expired' || status.state === 'revoked' || status.state === 'declined') {
        throw new GatelinkError({
          code: status.state,
          status: 200,
          message: WAIT_ENDS[status.state](status.code),
          attempts: 1,
        });
      }
      options.signal?.throwIfAborted();
      await this.#sleep(intervalMs, options.signal);
    }
  }

  /** The cloud's public key for event deliveries, from `/.well-known/service.json` (cloud/README.md). */
  async webhookKey(options: Pick<CallOptions, 'signal'> = {}): Promise<VerifyKey> {
    const url = `${this.#baseUrl}/.well-known/service.json`;
    const attempt = await this.#exchange(
      url,
      { method: 'GET', headers: { 'user-agent': this.#userAgent } },
      options,
    );
    const facts = { attempts: 1, idempotencyKey: undefined };
    if (attempt.kind === 'no_answer') throw networkError(attempt, facts);
    const key = (attempt.answer.json as { key?: unknown } | undefined)?.key;
    if (attempt.answer.status !== 200 || typeof key !== 'string') throw answerError(attempt.answer, facts);
    try {
      return strictPublicKeyFromBase64(key);
    } catch (error) {
      throw new GatelinkError({
        code: 'unexpected_answer',
        status: 200,
        message: `${url} holds no usable Ed25519 key: ${(error as Error).message}`,
        requestId: attempt.answer.requestId,
        ...facts,
      });
    }
  }

  /**
   * Moves your sandbox's simulated customer or barrier (`a=sandbox`): grant a request, withdraw a key, or choose
   * what the next openings come to. Only on a client made with `sandbox: true`.
   */
  sandboxMove(move: SandboxBody, options: Pick<CallOptions, 'signal'> = {}): Promise<SandboxAnswerBody> {
    return this.#call('sandbox', move, sandboxAnswerSchema, { ...options, idempotencyKey: false });
  }

  /** A call's own fields, with the sandbox's flag on a sandbox client. */
  #fields(fields: Record<string, unknown>): Record<string, unknown> {
    return this.#sandbox ? { sandbox: true, ...fields } : fields;
  }

  async #call<S extends z.ZodType>(
    action: Action,
    fields: Record<string, unknown>,
    schema: S,
    options: CallOptions,
  ): Promise<z.infer<S>> {
    const idempotencyKey =
      options.idempotencyKey === false ? undefined : (options.idempotencyKey ?? randomUUID());
    const auth = this.#needAuth(action);
    const body = callBody(auth, this.#fields(fields));
    const traits: CallTraits = {
      repeatable: action === 'status' || idempotencyKey !== undefined,
      hasIdempotencyKey: idempotencyKey !== undefined,
    };
    for (let retry = 0; ; retry++) {
      const attempt = await this.#attempt(action, auth, body, idempotencyKey, options.signal);
      const facts: CallFacts = { attempts: retry + 1, idempotencyKey };
      if (attempt.kind === 'answer' && attempt.answer.status === 200)
        return readSuccess(schema, attempt.answer, facts);
      const delay = this.#retryDelay(attempt, traits, retry);
      if (delay === undefined) {
        throw attempt.kind === 'answer' ? answerError(attempt.answer, facts) : networkError(attempt, facts);
      }
      await this.#sleep(delay, options.signal);
    }
  }

  #needAuth(action: Action): ClientAuth {
    if (!this.#auth) {
      throw new TypeError(
        `GatelinkClient: ${action} needs auth, readKeyFile(path) or { orgId, secret }; this client was made without`,
      );
    }
    return this.#auth;
  }

  /** How long to wait before the next attempt, or undefined when there is none. */
  #retryDelay(attempt: Attempt, traits: CallTraits, retry: number): number | undefined {
    if (retry >= this.#retry.retries) return undefined;
    const outcome: Outcome =
      attempt.kind === 'answer'
        ? {
            kind: 'answer',
            status: attempt.answer.status,
            code: errorCodeOf(attempt.answer),
            retryAfterMs: attempt.answer.retryAfterMs,
          }
        : { kind: 'no_answer', sent: attempt.sent };
    if (!shouldRetry(outcome, traits)) return undefined;
    const retryAfterMs = outcome.kind === 'answer' ? outcome.retryAfterMs : undefined;
    if (retryAfterMs === undefined) return backoffMs(retry, this.#retry, this.#random);
    // A wait longer than the cap is the caller's to decide on: the error carries retryAfterSeconds.
    return retryAfterMs <= this.#retry.maxRetryAfterMs ? retryAfterMs : undefined;
  }

  /** One attempt: the same body, fresh authentication headers. */
  /** One exchange within this client's deadline for an answer. */
  #exchange(
    url: string,
    init: RequestInit,
    options: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<Attempt> {
    return exchange(this.#fetch, url, init, { timeoutMs: this.#timeoutMs, ...options, now: this.#now });
  }

  #attempt(
    action: Action,
    auth: ClientAuth,
    body: string,
    idempotencyKey: string | undefined,
    signal?: AbortSignal,
  ): Promise<Attempt> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': this.#userAgent,
      ...attemptHeaders(auth, body, this.#now()),
      ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
    };
    const url = `${this.#baseUrl}/api/company.php?a=${action}`;
    const timeoutMs = action === 'open' ? this.#openTimeoutMs : this.#timeoutMs;
    return this.#exchange(
      url,
      { method: 'POST', headers, body },
      { timeoutMs, ...(signal ? { signal } : {}) },
    );
  }
}

function isIssued(status: StatusAnswer): status is IssuedStatus {
  return status.state === 'issued' && status.key_ref !== undefined && (status.numbers?.length ?? 0) > 0;
}
