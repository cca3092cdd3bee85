import { type ListenMessage, listenMessageSchema } from '../../shared/company-api/event-calls.js';
import { GatelinkError } from './gatelink-error.js';

/**
 * Reading the answer of `listen` (cloud/README.md, "Trying events"): Server-Sent Events as the HTML standard
 * frames them, fields `id`, `event` and `data` (several `data` lines joined by newlines), blank line ends one,
 * comment lines (`:`) skipped. Each message's data is checked with the shared schema, so a stream that is not
 * ours ends with an error rather than half an event.
 */
export interface ListenedEvent extends ListenMessage {
  /** The event's place in the company's order (the SSE `id`). */
  seq: string;
  /** Its kind (the SSE `event`). */
  type: string;
}

/** Lines a message may not exceed: a delivery is well under this, and a stream that is not ours is stopped. */
const MAX_MESSAGE_CHARS = 1 << 20;

export async function* readEventStream(
  body: ReadableStream<Uint8Array>,
  requestId: string | undefined,
): AsyncGenerator<ListenedEvent> {
  const decoder = new TextDecoder();
  let buffered = '';
  let fields: { id: string; event: string; data: string[] } = { id: '', event: 'message', data: [] };
  const reader = body.getReader();
  for (;;) {
    const { done, value: chunk } = await reader.read();
    if (done) return;
    buffered += decoder.decode(chunk, { stream: true });
    if (buffered.length > MAX_MESSAGE_CHARS) throw streamError('a message longer than 1 MiB', requestId);
    let end = buffered.search(/\r\n|\r|\n/);
    while (end >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + (buffered.startsWith('\r\n', end) ? 2 : 1));
      if (line === '') {
        if (fields.data.length > 0) yield message(fields, requestId);
        fields = { id: fields.id, event: 'message', data: [] };
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (name === 'id') fields.id = value;
        else if (name === 'event') fields.event = value;
        else if (name === 'data') fields.data.push(value);
      }
      end = buffered.search(/\r\n|\r|\n/);
    }
  }
}

function message(
  fields: { id: string; event: string; data: string[] },
  requestId: string | undefined,
): ListenedEvent {
  let json: unknown;
  try {
    json = JSON.parse(fields.data.join('\n'));
  } catch {
    throw streamError('a message whose data is not JSON', requestId);
  }
  const parsed = listenMessageSchema.safeParse(json);
  if (!parsed.success) throw streamError('a message this client does not understand', requestId);
  return { seq: fields.id, type: fields.event, ...parsed.data };
}

function streamError(what: string, requestId: string | undefined): GatelinkError {
  return new GatelinkError({
    code: 'unexpected_answer',
    status: 200,
    message: `The event stream sent ${what}.`,
    requestId,
    attempts: 1,
    idempotencyKey: undefined,
  });
}
