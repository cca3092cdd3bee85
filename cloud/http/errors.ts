import type { FastifyError, FastifyInstance } from 'fastify';
import { ApiError, type ErrorCode } from '../../shared/errors.js';

/**
 * The one place where failures become HTTP answers. Every response carries X-Request-Id; an unexpected
 * failure is logged with that id and answered with 500 `internal`, never with a stack trace or SQL.
 */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'bad_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'bad_json',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
};

export function registerErrorHandling(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.code === 'internal') {
      request.log.error({ err: error, requestId: request.id }, 'unexpected failure');
    }
    if (apiError.headers) reply.headers(apiError.headers);
    reply.code(apiError.status).send(apiError.toBody());
  });

  app.setNotFoundHandler((_request, reply) => {
    reply.code(404).send({ error: 'not_found', message: 'No such endpoint.' });
  });
}

function toApiError(error: FastifyError | ApiError): ApiError {
  if (error instanceof ApiError) return error;
  const mapped = FASTIFY_CODES[error.code];
  if (mapped) return new ApiError(mapped);
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY')
    return new ApiError('bad_json');
  // Fastify's own 4xx (a malformed request line, a bad header) keep their status, in our error shape.
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError(error.statusCode === 415 ? 'unsupported_media_type' : 'bad_json');
  }
  return new ApiError('internal');
}
