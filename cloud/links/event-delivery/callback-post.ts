import {
  type AnswerSample,
  type PostAnswer,
  type PublicPostConnection,
  postOnce,
} from '../outbound-http/public-post.js';

/**
 * One attempt to deliver an event (docs/design.md section 6): a POST to the callback address over a connection
 * of its own (cloud/links/outbound-http/public-post.ts): only to public addresses, checked on the address
 * actually connected to, at every attempt, so a name that later resolves to a private address is refused. Only
 * https, and no redirect is followed: a 3xx is a failed attempt like any other answer that is not 2xx. The
 * answer's head must arrive within the timeout; of its body the first KiB is kept for the delivery log, which
 * shows each attempt's request and answer to the company.
 */

export type CallbackConnection = PublicPostConnection;

export interface AttemptResult {
  /** The answer's status, when one came. */
  status: number | null;
  /** Why the attempt failed, in a sentence for the delivery log; null when it was delivered. */
  error: string | null;
  /** The headers sent, signatures included: what the receiver had to verify. */
  sent: Record<string, string>;
  /** The answer's headers and first KiB, when one came. */
  answer: AnswerSample | null;
}

/** How much of an answer's body the delivery log keeps. */
export const ANSWER_SAMPLE_BYTES = 1024;

const USER_AGENT = 'Gatelink-Webhooks/1';

export async function postEvent(
  url: string,
  message: { headers: Record<string, string>; body: string },
  connection: CallbackConnection,
  stop?: AbortSignal,
): Promise<AttemptResult> {
  const sent = {
    ...message.headers,
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(message.body)),
    'User-Agent': USER_AGENT,
  };
  const unanswered = (error: string): AttemptResult => ({ status: null, error, sent, answer: null });
  const target = URL.parse(url);
  if (!target || (target.protocol !== 'https:' && target.protocol !== 'http:')) {
    return unanswered('the callback address is not an https URL');
  }
  if (target.protocol === 'http:' && !connection.allowPrivateAddresses) {
    return unanswered('the callback address is not https');
  }
  if (target.username || target.password) {
    return unanswered('the callback address has credentials in it');
  }
  const answer = await postOnce(
    target,
    { headers: sent, body: message.body, answerBytes: ANSWER_SAMPLE_BYTES },
    connection,
    stop,
  );
  return {
    ...attemptResult(answer, connection),
    sent,
    answer: answer.kind === 'answered' ? answer.sample : null,
  };
}

function attemptResult(
  answer: PostAnswer,
  connection: CallbackConnection,
): Pick<AttemptResult, 'status' | 'error'> {
  switch (answer.kind) {
    case 'answered':
      if (answer.status >= 200 && answer.status < 300) return { status: answer.status, error: null };
      return { status: answer.status, error: describeStatus(answer.status, answer.location) };
    case 'timed out':
      return { status: null, error: `no answer within ${formatSeconds(connection.timeoutMs)}` };
    case 'refused':
      return {
        status: null,
        error: `refused to connect: ${answer.hostname} is not a public address (${answer.addresses.join(', ')})`,
      };
    case 'failed':
      return {
        status: null,
        error: answer.code ? `could not connect: ${answer.code}` : `could not deliver: ${answer.message}`,
      };
  }
}

function describeStatus(status: number, location: string | undefined): string {
  if (status >= 300 && status < 400) {
    return `answered ${status} (a redirect${location ? ` to ${location.slice(0, 200)}` : ''}): callbacks do not follow redirects, give the final address`;
  }
  return `answered ${status}; only a 2xx status is a delivery`;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
