import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { type KeyShape, storedWindows } from '../grant-shapes/stored-shape.js';
import { recordAccessAct } from './access-history.js';
import { standingOrNoKey } from './access-keys.js';

/**
 * The customer changes the shape of a key on their barrier (docs/design.md section 3.1): its hours, start,
 * openings and end, at once, for the next `open`. Only the owner or a member who may grant (section 9.2), only a
 * key of the household's, on that barrier, not withdrawn: any other answers like one that does not exist. The company reads the new shape in `status`, and the barrier's history records who
 * changed it. It lives beside the keys rather than in cloud/rules/grant-shapes/, which the keys' rules stand on.
 */
export async function reshapeAccessKey(
  ctx: CloudContext,
  input: {
    customerId: number;
    deviceId: string;
    keyRef: number;
    shape: Pick<KeyShape, 'startsAt' | 'windows' | 'openings'>;
    /** "Ask me before each opening" (docs/design.md section 10.8): the wait for an answer; null: it does not ask. */
    askFirstS?: number | null;
    /** The key's end: kept as it is, or a new one (null: until withdrawn). */
    end: { keep: true } | { keep: false; at: Date | null };
  },
): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.transaction().execute(async (trx) => {
    const { ownerId } = await standingOrNoKey(trx, input);
    const key = await trx
      .selectFrom('keys')
      .select(['id', 'expires_at', 'device_id', 'company_id'])
      .where('id', '=', input.keyRef)
      .where('customer_id', '=', ownerId)
      .where('device_id', '=', input.deviceId)
      .where('revoked_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
    if (!key) throw new ApiError('not_found', { message: 'No such key among yours.' });
    const end = input.end.keep ? key.expires_at : input.end.at;
    if (!input.end.keep && end && end <= now) {
      throw new ApiError('invalid_field', {
        field: 'key_expires_at',
        message: 'The end of access must be in the future.',
      });
    }
    const { startsAt } = input.shape;
    if (startsAt && end && startsAt >= end) {
      throw new ApiError('invalid_field', {
        field: 'starts_at',
        message: 'The start of access must come before its end.',
      });
    }
    await trx
      .updateTable('keys')
      .set({
        starts_at: startsAt,
        windows: input.shape.windows ? JSON.stringify(storedWindows(input.shape.windows)) : null,
        openings_allowed: input.shape.openings,
        ...(input.askFirstS === undefined ? {} : { ask_first_s: input.askFirstS }),
        expires_at: end,
        // A new end is a new lifetime: the expiry sweep records its lapse again when it comes.
        ...(input.end.keep ? {} : { expiry_recorded_at: null }),
      })
      .where('id', '=', key.id)
      .execute();
    await recordAccessAct(trx, { act: 'reshaped', key, customerId: input.customerId, at: now });
  });
}
