import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../shared/errors.js';
import type { CloudContext } from '../context.js';
import { countHit } from './rate-counter.js';

/**
 * A limit per client address shared by a group of routes (docs/design.md section 10.1): every request of the
 * group counts in one database counter, so the limit holds across routes and across cloud instances, and the
 * one past it is refused with 429 `too_many_attempts` and `Retry-After` before the route looks anything up.
 */
export interface AddressLimit {
  /** The counter's name; routes that share it share the limit. */
  bucket: string;
  max: number;
  windowMs: number;
}

export function limitPerAddress(ctx: CloudContext, limit: AddressLimit) {
  return async (request: FastifyRequest): Promise<void> => {
    const hit = await countHit(ctx.db, {
      bucket: limit.bucket,
      key: request.ip,
      windowMs: limit.windowMs,
      now: ctx.clock.now(),
    });
    if (hit.count > limit.max) {
      throw new ApiError('too_many_attempts', {
        headers: { 'retry-after': String(Math.max(1, Math.ceil(hit.resetMs / 1000))) },
      });
    }
  };
}
