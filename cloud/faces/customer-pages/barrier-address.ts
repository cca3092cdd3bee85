import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../../shared/errors.js';

/** The shape of a device id; anything else in a path or query names no barrier of anyone's. */
export const DEVICE_ID = /^D[0-9A-Z]{10}$/;

/** The barrier id of the path; one that cannot be a device id is answered like any other not among yours. */
export function barrierId(request: FastifyRequest): string {
  const { id } = request.params as { id: string };
  if (!DEVICE_ID.test(id)) throw new ApiError('not_found', { message: 'No such barrier among yours.' });
  return id;
}
