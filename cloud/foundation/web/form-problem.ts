import type { FastifyReply } from 'fastify';
import { ApiError, type ErrorCode } from '../../../shared/errors.js';

/**
 * Failures a person can do something about are shown on the form they sent, next to the field, with the
 * error's own status and headers (a 429 keeps its Retry-After), rather than on a bare error page
 * (docs/design.md section 10.2). Any other failure goes on to the error handler.
 */
export type Attempt<T> =
  | { ok: true; value: T }
  | { ok: false; code: ErrorCode; status: number; message: string };

export async function onForm<T>(
  reply: FastifyReply,
  codes: readonly ErrorCode[],
  work: () => Promise<T>,
): Promise<Attempt<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    if (!(error instanceof ApiError) || !codes.includes(error.code)) throw error;
    if (error.headers) reply.headers(error.headers);
    return { ok: false, code: error.code, status: error.status, message: error.message };
  }
}
