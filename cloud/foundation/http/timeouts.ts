/**
 * How long the HTTP server waits for a client. A company's client sends a call of at most 16 KiB at once
 * (cloud/README.md, "Calls"), so anything slower is a broken or hostile client holding a connection: it is cut
 * off with 408 `request_timeout` (cloud/foundation/http/client-errors.ts) while other calls go on. Tests pass smaller
 * values through `startCloud`'s `httpTimeouts`. Time spent answering is not bounded here: an `open` waits up to
 * 8 s for the controller, so a connection with a call in progress has no idle timeout (Fastify's
 * `connectionTimeout` stays 0).
 */
export interface HttpTimeouts {
  /** From the connection's first byte (or the end of the previous call) to the end of the headers. */
  headersMs: number;
  /** From the first byte to the end of the body; never shorter than `headersMs`. */
  requestMs: number;
  /** An idle connection between calls is closed after this. */
  keepAliveMs: number;
  /** How often Node looks for connections past `headersMs` or `requestMs`: the deadlines are this coarse. */
  checkIntervalMs: number;
}

export const HTTP_TIMEOUTS: HttpTimeouts = {
  // Headers fit in one packet; ten seconds allows for a poor network and not for one byte a second.
  headersMs: 10_000,
  // A body is at most 16 KiB: it arrives well within this on any link a server uses.
  requestMs: 30_000,
  // Longer than a load balancer's usual 60 s idle timeout, so that the balancer closes first and never
  // sends a call on a connection we are closing (Fastify's default for the same reason).
  keepAliveMs: 72_000,
  // Node checks every 30 s by default, which would let a slow client hold a connection four times as long.
  checkIntervalMs: 1_000,
};
