import { timingSafeEqual } from 'node:crypto';
import type { onRequestAsyncHookHandler } from 'fastify';
import { ApiError } from '../../../shared/errors.js';

/**
 * The check of the operator API and of `/metrics` (docs/design.md sections 8 and 8.1): the `Authorization`
 * header must be `Bearer OPERATOR_TOKEN`, compared in constant time, or the call is refused with 401
 * `unauthorized` before its route runs.
 */
export function requireOperatorToken(token: string): onRequestAsyncHookHandler {
  const expected = Buffer.from(`Bearer ${token}`);
  return async (request) => {
    const presented = Buffer.from(request.headers.authorization ?? '');
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
      throw new ApiError('unauthorized');
    }
  };
}
