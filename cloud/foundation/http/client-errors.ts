import { randomUUID } from 'node:crypto';
import { type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ConnectionError, FastifyBaseLogger } from 'fastify';
import { ApiError } from '../../../shared/errors.js';

/**
 * Requests that never reach a route: Node's HTTP parser refused them (a control character in a header, a
 * malformed request line, a bad chunked body), they overran the header size or a timeout
 * (cloud/foundation/http/timeouts.ts), or they asked for CONNECT. They are answered in the error contract of
 * cloud/README.md ("Errors") all the same, with a fresh X-Request-Id that the log line carries too, and the
 * connection is closed: the parser cannot find the next request in what follows. A request with an Expect
 * header that Node would refuse itself is served instead.
 */

/** Node's codes for the parser's refusals that are not a plain 400 (as Node's own answers map them). */
function toApiError(code: string): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError('headers_too_large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('request_timeout');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiError('too_large', {
        message: 'The chunk extensions of the body are too large; send the body without them.',
      });
    default:
      return new ApiError('bad_request');
  }
}

/** The response Node is writing on the socket, if any (`_httpMessage` is how Node itself checks). */
interface HttpSocket extends Duplex {
  _httpMessage?: ServerResponse | null;
}

/** Time a refused client has to read the answer before its connection is cut, in case it never closes. */
const CLOSE_GRACE_MS = 2000;

/** Sockets already answered: Node reports every later chunk of bytes on them as another parser error. */
const answered = new WeakSet<Duplex>();

/**
 * Answers `error` on the socket, then closes the connection. Answers go out in the order of the requests
 * (RFC 9112 section 9.3.2): a complete call followed by garbage gets its own answer first. A call whose body
 * the parser refused is answered at once instead: its handler waits for a body that will not come.
 */
export function answerOnSocket(socket: Duplex, error: ApiError, requestId: string, allow?: string): void {
  if (answered.has(socket)) return;
  answered.add(socket);
  afterResponses(socket, () => writeAndClose(socket, error, requestId, allow));
}

function afterResponses(socket: HttpSocket, then: () => void): void {
  const current = socket._httpMessage;
  const refusedBodyOfCurrent = current && !current.req.complete && !current.headersSent;
  if (!current || current.writableFinished || refusedBodyOfCurrent) {
    then();
    return;
  }
  // Node hands the socket to the next queued response on `finish`, before this listener runs.
  current.once('finish', () => afterResponses(socket, then));
}

/**
 * A complete HTTP/1.1 response, then a FIN (so that bytes the client still sends do not turn the close into
 * a reset that could discard the answer), and a hard close after CLOSE_GRACE_MS for a client that never
 * closes its side. Nothing is written on a socket that no longer takes data.
 */
function writeAndClose(socket: Duplex, error: ApiError, requestId: string, allow: string | undefined): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(error.toBody());
  const head = [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    ...(allow ? [`allow: ${allow}`] : []),
    'connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  const timer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/**
 * Fastify's `clientErrorHandler` (called with the instance as `this`): the parser's refusal, answered in the
 * error contract. Logged with the parser's code and no stack: it tells of the client, not of us.
 */
export function answerClientError(
  this: { log: FastifyBaseLogger },
  error: ConnectionError,
  socket: Duplex,
): void {
  // The client is gone: there is nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const requestId = randomUUID();
  this.log.info({ reqId: requestId, code: error.code }, 'request refused by the HTTP parser');
  answerOnSocket(socket, toApiError(error.code), requestId);
}

/**
 * CONNECT asks the service to act as a proxy, which it is not. Node hands such a request to the `connect`
 * event and, with no listener, drops the connection without a word; this answers it instead.
 */
export function answerConnect(log: FastifyBaseLogger) {
  return (_request: unknown, socket: Duplex): void => {
    const requestId = randomUUID();
    log.info({ reqId: requestId, method: 'CONNECT' }, 'request refused: CONNECT');
    answerOnSocket(
      socket,
      new ApiError('method_not_allowed', {
        message:
          'This service is not a proxy; the company API answers only POST /api/company.php?a=<action>.',
      }),
      requestId,
      'POST',
    );
  };
}

/**
 * An `Expect` other than 100-continue: Node would answer a bare 417 itself, outside the error contract.
 * RFC 9110 (section 10.1.1) lets a server ignore an expectation it does not know, and none of our calls needs
 * one: the call is served as if the header were absent.
 */
export function serveDespiteExpectations(server: Server): void {
  server.on('checkExpectation', (request, response) => server.emit('request', request, response));
}
