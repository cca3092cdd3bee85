import { validateHeaderValue } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorCode } from '../../../shared/errors.js';
import { type DatabaseOutage, isDatabaseUnreachable, RETRY_AFTER_SECONDS } from '../db/database-outage.js';

/**
 * The one place where failures become HTTP answers (cloud/README.md, "Errors"). Every response carries
 * X-Request-Id; an unexpected failure is logged with that id and answered with 500 `internal`, never with a
 * stack trace or SQL. What Node's parser refuses before Fastify sees it is answered in the same shape by
 * cloud/foundation/http/client-errors.ts.
 */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'bad_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'bad_json',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
  FST_ERR_BAD_URL: 'bad_request',
  FST_ERR_MAX_PARAM_LENGTH: 'bad_request',
  // Node refusing a header value at the last moment: a value taken from the request that no check stopped.
  ERR_INVALID_CHAR: 'bad_request',
  ERR_HTTP_INVALID_HEADER_VALUE: 'bad_request',
};

/** Fastify's other client errors keep their status where the table has it, else they are a 400. */
const CODES_BY_STATUS: Record<number, ErrorCode> = {
  400: 'bad_request',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'too_large',
  415: 'unsupported_media_type',
  431: 'headers_too_large',
};

/** What to do about the Fastify refusals whose code alone would not say it. */
const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_BAD_URL: 'The URL is not valid percent-encoded UTF-8; encode the path and query as UTF-8.',
  FST_ERR_MAX_PARAM_LENGTH: 'A part of the path is longer than 100 characters; no endpoint has one.',
  ERR_INVALID_CHAR:
    'A value sent cannot be used in the answer: it holds a control character or one outside Latin-1.',
  ERR_HTTP_INVALID_HEADER_VALUE: 'A value sent cannot be used in the answer.',
};

/** How a browser's request for a page that does not exist is answered (the customer application's 404 page). */
export type NotFoundPage = (request: FastifyRequest, reply: FastifyReply) => FastifyReply;

export function registerErrorHandling(
  app: FastifyInstance,
  options: { notFoundPage?: NotFoundPage; outage?: DatabaseOutage } = {},
): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    requireHost(request);
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    answer(request, reply, toApiError(error), error, options.outage);
  });

  app.setNotFoundHandler(async (request, reply) => {
    const page = options.notFoundPage;
    if (page && request.method === 'GET' && (request.headers.accept ?? '').includes('text/html')) {
      return page(request, reply);
    }
    throw new ApiError('not_found', {
      message: 'No such endpoint; the company API is POST /api/company.php?a=<action>.',
    });
  });
}

/**
 * Fastify's `frameworkErrors`: a URL it cannot decode is refused before any hook runs, so the request id is
 * set here.
 */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  answer(request, reply, toApiError(error), error);
}

function answer(
  request: FastifyRequest,
  reply: FastifyReply,
  apiError: ApiError,
  cause: Error,
  outage?: DatabaseOutage,
): void {
  logFailure(request, apiError, cause, outage);
  reply.header('x-request-id', request.id);
  dropRefusedHeaders(reply);
  if (apiError.headers) reply.headers(apiError.headers);
  reply.code(apiError.status).send(apiError.toBody());
}

/**
 * Removes the headers Node would refuse to send (ERR_INVALID_CHAR), which the failed answer set: left, they
 * would make the error answer fail too, and Fastify's own last answer is outside the contract.
 */
export function dropRefusedHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value === undefined) continue;
    try {
      for (const one of Array.isArray(value) ? value : [value]) validateHeaderValue(name, String(one));
    } catch {
      reply.removeHeader(name);
    }
  }
}

/** An unexpected failure in the log with its request id; the database out of reach once per outage instead. */
export function logFailure(
  request: FastifyRequest,
  apiError: ApiError,
  cause: unknown,
  outage: DatabaseOutage | undefined,
): void {
  if (apiError.code === 'unavailable') outage?.failed(cause, request.routeOptions.url ?? 'unmatched');
  if (apiError.code === 'internal') {
    request.log.error({ err: cause, requestId: request.id }, 'unexpected failure');
  }
}

/** HTTP/1.1 requires Host (RFC 9112, 3.2); Node's own refusal would be an empty 400 outside our contract. */
function requireHost(request: FastifyRequest): void {
  const { httpVersionMajor, httpVersionMinor } = request.raw;
  if (httpVersionMajor === 1 && httpVersionMinor >= 1 && !request.headers.host) {
    throw new ApiError('bad_request', { message: 'Send a Host header: HTTP/1.1 requires one.' });
  }
}

export function toApiError(error: FastifyError | ApiError): ApiError {
  if (error instanceof ApiError) return error;
  const mapped = FASTIFY_CODES[error.code];
  const message = FASTIFY_MESSAGES[error.code];
  if (mapped) return new ApiError(mapped, message ? { message } : {});
  if (error instanceof SyntaxError) return new ApiError('bad_json');
  // Not our failure but the database's, for a moment: the caller may retry (cloud/README.md, "Errors").
  if (isDatabaseUnreachable(error)) {
    return new ApiError('unavailable', { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } });
  }
  const status = error.statusCode ?? 500;
  if (status >= 500) return new ApiError('internal');
  return new ApiError(CODES_BY_STATUS[status] ?? 'bad_request');
}
