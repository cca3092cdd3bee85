import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';

/**
 * A barrier's limits, set by its customer (docs/design.md section 5.2): how long a gate may stay open before
 * the customer and the opening's company are told, and how soon after the relay fired the gate must be seen
 * moving. The bounds are the database's own checks (migration 0010), so a value that passes here is stored.
 */
export const LEFT_OPEN_LIMIT_S = { min: 60, max: 86_400, default: 600 } as const;
export const MOVE_TIMEOUT_S = { min: 5, max: 600, default: 30 } as const;

export const barrierLimitsSchema = z.strictObject({
  left_open_limit_s: z.coerce.number().int().min(LEFT_OPEN_LIMIT_S.min).max(LEFT_OPEN_LIMIT_S.max),
  move_timeout_s: z.coerce.number().int().min(MOVE_TIMEOUT_S.min).max(MOVE_TIMEOUT_S.max),
});
export type BarrierLimits = z.infer<typeof barrierLimitsSchema>;

/** The barrier's limits, or null when it is not this customer's. */
export async function readBarrierLimits(
  ctx: CloudContext,
  customerId: number,
  deviceId: string,
): Promise<BarrierLimits | null> {
  const row = await ctx.db
    .selectFrom('devices')
    .select(['left_open_limit_s', 'move_timeout_s'])
    .where('id', '=', deviceId)
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
  return row ?? null;
}

/**
 * Sets the barrier's limits from what the customer sent (form fields as strings are taken). A value out of
 * bounds throws `invalid_field` naming the field and its bounds; another customer's barrier `not_found`, and is
 * left as it was.
 */
export async function setBarrierLimits(
  ctx: CloudContext,
  customerId: number,
  deviceId: string,
  input: unknown,
): Promise<BarrierLimits> {
  const parsed = barrierLimitsSchema.safeParse(input);
  if (!parsed.success) {
    const field = String(parsed.error.issues[0]?.path[0] ?? 'left_open_limit_s');
    throw new ApiError('invalid_field', { field, message: limitProblem(field) });
  }
  const updated = await ctx.db
    .updateTable('devices')
    .set(parsed.data)
    .where('id', '=', deviceId)
    .where('customer_id', '=', customerId)
    .returning(['left_open_limit_s', 'move_timeout_s'])
    .executeTakeFirst();
  if (!updated) throw new ApiError('not_found', { message: 'No such barrier among yours.' });
  return updated;
}

function limitProblem(field: string): string {
  if (field === 'move_timeout_s') {
    return `Give the time to see the gate move in whole seconds, from ${MOVE_TIMEOUT_S.min} to ${MOVE_TIMEOUT_S.max}.`;
  }
  if (field === 'left_open_limit_s') {
    return `Give the time a gate may stay open in whole seconds, from ${LEFT_OPEN_LIMIT_S.min} to ${LEFT_OPEN_LIMIT_S.max}.`;
  }
  return 'Send left_open_limit_s and move_timeout_s only.';
}
