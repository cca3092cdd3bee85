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

/**
 * A row's number in the path under a barrier (`/barriers/<id>/members/<memberId>`): a positive integer a table can
 * hold, else 404 with `notFound`, so that a mangled address reads like one naming nothing.
 */
export function pathNumber(request: FastifyRequest, name: string, notFound: string): number {
  const value = (request.params as Record<string, string | undefined>)[name] ?? '';
  if (!/^[1-9]\d{0,8}$/.test(value)) throw new ApiError('not_found', { message: notFound });
  return Number(value);
}
