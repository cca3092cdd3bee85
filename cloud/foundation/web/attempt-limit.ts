import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../context.js';
import { clientAddressKey } from './client-address.js';
import { countHit } from './rate-counter.js';

/**
 * A limit on attempts, counted in the database so that it holds across instances (docs/design.md section
 * 10.2): at most `max` hits per key in each fixed window of `windowMs`.
 */
export interface AttemptLimit {
  readonly bucket: string;
  readonly max: number;
  readonly windowMs: number;
  /** What the person is told, given the wait in words ("12 minutes"). */
  readonly message: (wait: string) => string;
}

/**
 * Counts one attempt under `key`; past the limit, refuses with 429 `too_many_attempts`, its Retry-After and a
 * sentence that says how long to wait.
 */
export async function countAttempt(ctx: CloudContext, limit: AttemptLimit, key: string): Promise<void> {
  const hit = await countHit(ctx.db, {
    bucket: limit.bucket,
    key,
    windowMs: limit.windowMs,
    now: ctx.clock.now(),
  });
  if (hit.count <= limit.max) return;
  const seconds = Math.max(1, Math.ceil(hit.resetMs / 1000));
  throw new ApiError('too_many_attempts', {
    message: limit.message(waitInWords(seconds)),
    headers: { 'retry-after': String(seconds) },
  });
}

/**
 * A route hook that counts each request under its client's address (an IPv6 client by its /64), so that a group
 * of routes given the same limit shares one counter, across routes and instances, and the request past it is
 * refused before the route looks anything up.
 */
export function limitPerAddress(ctx: CloudContext, limit: AttemptLimit) {
  return (request: FastifyRequest): Promise<void> => countAttempt(ctx, limit, clientAddressKey(request.ip));
}

function waitInWords(seconds: number): string {
  if (seconds < 90) return `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 120) return `${minutes} minutes`;
  return `${Math.ceil(minutes / 60)} hours`;
}
