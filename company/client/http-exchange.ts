import type { Answer, CallFacts } from './answers.js';
import { GatelinkError } from './gatelink-error.js';
import { parseRetryAfter } from './retry-policy.js';

/**
 * One HTTP exchange of the company client (docs/design.md section 11.6): an answer, read whole, or none, with
 * whether the call may have reached the cloud, which decides whether it may be sent again.
 */
export type Attempt =
  | { kind: 'answer'; answer: Answer }
  | { kind: 'no_answer'; sent: 'not_sent' | 'maybe'; cause: unknown };

/** Errors of a refused or unsent connection: the call never reached the cloud. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

export async function exchange(
  fetchFn: typeof fetch,
  url: string,
  init: RequestInit,
  options: { signal?: AbortSignal; timeoutMs: number; now: () => number },
): Promise<Attempt> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    const response = await fetchFn(url, { ...init, signal });
    const text = await response.text();
    return {
      kind: 'answer',
      answer: {
        status: response.status,
        json: parseJson(text),
        requestId: response.headers.get('x-request-id') ?? undefined,
        retryAfterMs: parseRetryAfter(response.headers.get('retry-after'), options.now()),
      },
    };
  } catch (error) {
    // The caller's own abort ends the call; it is not a network failure.
    options.signal?.throwIfAborted();
    return { kind: 'no_answer', sent: notSent(error) ? 'not_sent' : 'maybe', cause: error };
  }
}

/** The text as JSON, or undefined when it is not (a proxy's page). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether the failure shows that no byte of the call reached the cloud (the connection was never made). */
function notSent(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === 'string' && NOT_SENT_CODES.has(cause.code);
}

export function networkError(
  attempt: Extract<Attempt, { kind: 'no_answer' }>,
  facts: CallFacts,
): GatelinkError {
  const cause = attempt.cause as { name?: unknown; cause?: { code?: unknown } } | undefined;
  const why =
    cause?.name === 'TimeoutError'
      ? 'no answer in time'
      : typeof cause?.cause?.code === 'string'
        ? cause.cause.code
        : String((attempt.cause as Error | undefined)?.message ?? attempt.cause);
  const reached = attempt.sent === 'maybe' ? '; the call may have reached the cloud' : '';
  return new GatelinkError({
    code: 'network_error',
    status: 0,
    message: `No answer from the cloud after ${facts.attempts} attempt(s): ${why}${reached}.`,
    detail: why,
    cause: attempt.cause,
    ...facts,
  });
}
