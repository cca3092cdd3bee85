import { randomCode } from '../../../shared/codes.js';
import type { CloudContext } from '../../foundation/context.js';
import { CODE_LIFETIME_MS, PAIRING_CODE_LENGTH } from './devices.js';

/**
 * A pairing code for a provisioned controller that no customer has added yet (docs/design.md section 9): the
 * current one while it is valid, else a fresh one for another 24 hours, so a controller that waited on a shelf
 * past its first code can still be added. Null for a controller that is paired (it belongs to its customer
 * until they remove it) or not provisioned.
 */
export async function pairingCodeFor(
  ctx: CloudContext,
  deviceId: string,
): Promise<{ code: string; expiresAt: Date } | null> {
  const now = ctx.clock.now();
  const device = await ctx.db
    .selectFrom('devices')
    .select(['customer_id', 'provisioned_at', 'pairing_code', 'pairing_expires_at'])
    .where('id', '=', deviceId)
    .executeTakeFirst();
  if (!device || device.customer_id !== null || !device.provisioned_at) return null;
  if (device.pairing_code && device.pairing_expires_at && device.pairing_expires_at > now) {
    return { code: grouped(device.pairing_code), expiresAt: device.pairing_expires_at };
  }
  const code = randomCode(PAIRING_CODE_LENGTH);
  const expiresAt = new Date(now.getTime() + CODE_LIFETIME_MS);
  await ctx.db
    .updateTable('devices')
    .set({ pairing_code: code, pairing_expires_at: expiresAt })
    .where('id', '=', deviceId)
    .where('customer_id', 'is', null)
    .execute();
  return { code: grouped(code), expiresAt };
}

function grouped(code: string): string {
  return code.match(/.{1,4}/g)!.join('-');
}
