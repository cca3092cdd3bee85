import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';

/**
 * A customer's passkeys (docs/design.md section 10.2): as many as they like, each with a name they can change,
 * and removable as long as the account keeps another way in: another passkey, or a confirmed e-mail address.
 */
export interface Passkey {
  id: number;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** Synced to the person's other devices by their passkey provider. */
  backedUp: boolean;
}

/** What a verified registration leaves to keep; binary values in base64url. */
export interface NewCredential {
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  deviceType: string;
  backedUp: boolean;
}

export const MAX_PASSKEY_NAME_LENGTH = 64;

export async function listPasskeys(ctx: CloudContext, customerId: number): Promise<Passkey[]> {
  const rows = await ctx.db
    .selectFrom('passkeys')
    .select(['id', 'name', 'created_at', 'last_used_at', 'backed_up'])
    .where('customer_id', '=', customerId)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    backedUp: row.backed_up,
  }));
}

/**
 * Keeps a new passkey under a readable name ("Passkey added 23 Nov 2026", numbered when that day already has
 * one), which its owner may change. A credential id that is already registered is refused: it cannot belong
 * to two accounts.
 */
export async function savePasskey(
  db: Database,
  input: { customerId: number; credential: NewCredential; now: Date },
): Promise<number> {
  const { credential } = input;
  const names = await db
    .selectFrom('passkeys')
    .select('name')
    .where('customer_id', '=', input.customerId)
    .execute();
  const row = await db
    .insertInto('passkeys')
    .values({
      customer_id: input.customerId,
      credential_id: credential.credentialId,
      public_key: credential.publicKey,
      counter: credential.counter,
      transports: JSON.stringify(credential.transports),
      name: defaultPasskeyName(
        input.now,
        names.map((n) => n.name),
      ),
      device_type: credential.deviceType,
      backed_up: credential.backedUp,
      created_at: input.now,
    })
    .onConflict((oc) => oc.column('credential_id').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!row) throw new ApiError('passkey_refused', { message: 'This passkey is already registered.' });
  return row.id;
}

export function defaultPasskeyName(now: Date, taken: readonly string[]): string {
  const base = `Passkey added ${dayLabel(now)}`;
  if (!taken.includes(base)) return base;
  let n = 2;
  while (taken.includes(`${base} (${n})`)) n += 1;
  return `${base} (${n})`;
}

export async function renamePasskey(
  ctx: CloudContext,
  input: { customerId: number; passkeyId: number; name: string },
): Promise<void> {
  const result = await ctx.db
    .updateTable('passkeys')
    .set({ name: input.name })
    .where('id', '=', input.passkeyId)
    .where('customer_id', '=', input.customerId)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw noSuchPasskey();
}

/**
 * Removes a passkey unless it is the account's last way in. The customer's row is locked first, so that two
 * removals at once (two tabs, two instances) see each other and cannot together remove the last two.
 */
export async function removePasskey(
  ctx: CloudContext,
  input: { customerId: number; passkeyId: number },
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const customer = await trx
      .selectFrom('customers')
      .select('email_verified_at')
      .where('id', '=', input.customerId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const keys = await trx
      .selectFrom('passkeys')
      .select('id')
      .where('customer_id', '=', input.customerId)
      .execute();
    if (!keys.some((key) => key.id === input.passkeyId)) throw noSuchPasskey();
    if (isLastWayIn(keys.length, !!customer.email_verified_at)) throw new ApiError('last_way_in');
    await trx.deleteFrom('passkeys').where('id', '=', input.passkeyId).execute();
  });
}

/** Whether removing one of an account's passkeys would leave it without a way in. */
export function isLastWayIn(passkeyCount: number, emailConfirmed: boolean): boolean {
  return passkeyCount <= 1 && !emailConfirmed;
}

/** "23 Nov 2026", in UTC: the day is what a person recognises a passkey by. */
export function dayLabel(date: Date): string {
  return new Intl.DateTimeFormat('en-GB', {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    timeZone: 'UTC',
  }).format(date);
}

/** Another customer's passkey is answered as one that does not exist. */
function noSuchPasskey(): ApiError {
  return new ApiError('not_found', { message: 'There is no such passkey on your account.' });
}
