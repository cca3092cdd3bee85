import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { isUniqueViolation } from '../../foundation/db/unique-violation.js';
import { type NewCredential, savePasskey } from '../passkeys/passkeys.js';
import { localPart } from '../sign-in-codes/email-address.js';

/**
 * What a customer's account holds besides its passkeys (docs/design.md section 10.2). An e-mail address is put
 * on an account only once a code sent to it was entered here (or by an operator, who vouches for it): an
 * address typed at sign-up and never confirmed would let its real owner, signing in by code later, walk into
 * an account someone else prepared for them, with that someone's passkey still in it.
 */
export interface Account {
  id: number;
  displayName: string;
  email: string | null;
  emailVerifiedAt: Date | null;
  /** The zone its times are shown in; null until the browser proposes one or the customer chooses (UTC). */
  timeZone: string | null;
}

export const MAX_DISPLAY_NAME_LENGTH = 100;

export async function findAccount(ctx: CloudContext, customerId: number): Promise<Account | null> {
  const row = await ctx.db
    .selectFrom('customers')
    .select(['id', 'display_name', 'email', 'email_verified_at', 'time_zone'])
    .where('id', '=', customerId)
    .executeTakeFirst();
  return row
    ? {
        id: row.id,
        displayName: row.display_name,
        email: row.email,
        emailVerifiedAt: row.email_verified_at,
        timeZone: row.time_zone,
      }
    : null;
}

/**
 * Sets the zone the account reads times in (docs/design.md section 10.1), a name `isTimeZone` accepted at the
 * edge. A zone the browser proposes is kept only while the account has none: a second tab's proposal must not
 * undo a zone the customer chose.
 */
export async function setAccountTimeZone(
  ctx: CloudContext,
  input: { customerId: number; zone: string; proposed: boolean },
): Promise<void> {
  let update = ctx.db
    .updateTable('customers')
    .set({ time_zone: input.zone })
    .where('id', '=', input.customerId);
  if (input.proposed) update = update.where('time_zone', 'is', null);
  await update.execute();
}

/**
 * The account of an address whose code was just entered, made now if there is none: the code proves that the
 * person holds the address, which is all an account by e-mail asks. `displayName` is the name given at sign-up;
 * without one (a sign-in by code with a new address) the address's local part stands in until it is changed.
 */
export async function accountForVerifiedEmail(
  ctx: CloudContext,
  input: { email: string; displayName: string | undefined },
): Promise<{ customerId: number; created: boolean }> {
  const now = ctx.clock.now();
  const existing = await ctx.db
    .updateTable('customers')
    .set((eb) => ({ email_verified_at: eb.fn.coalesce('email_verified_at', eb.val(now)) }))
    .where('email', '=', input.email)
    .returning('id')
    .executeTakeFirst();
  if (existing) return { customerId: existing.id, created: false };
  const created = await ctx.db
    .insertInto('customers')
    .values({
      display_name: (input.displayName ?? localPart(input.email)).slice(0, MAX_DISPLAY_NAME_LENGTH),
      email: input.email,
      email_verified_at: now,
      created_at: now,
    })
    .onConflict((oc) => oc.column('email').doNothing())
    .returning('id')
    .executeTakeFirst();
  // Two sign-ins by two codes for one new address at once: the other one made the account.
  if (!created) return accountForVerifiedEmail(ctx, input);
  return { customerId: created.id, created: true };
}

/** A new account whose one way in is the passkey just made; no e-mail address until one is confirmed. */
export async function createAccountWithPasskey(
  ctx: CloudContext,
  input: { displayName: string; credential: NewCredential },
): Promise<number> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const customer = await trx
      .insertInto('customers')
      .values({ display_name: input.displayName, created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    await savePasskey(trx, { customerId: customer.id, credential: input.credential, now });
    return customer.id;
  });
}

/** Puts an address whose code was just entered on the customer's account, replacing any other. */
export async function setVerifiedEmail(ctx: CloudContext, customerId: number, email: string): Promise<void> {
  const holder = await ctx.db
    .selectFrom('customers')
    .select('id')
    .where('email', '=', email)
    .executeTakeFirst();
  if (holder && holder.id !== customerId) throw new ApiError('email_taken');
  try {
    await ctx.db
      .updateTable('customers')
      .set({ email, email_verified_at: ctx.clock.now() })
      .where('id', '=', customerId)
      .execute();
  } catch (error) {
    if (isUniqueViolation(error)) throw new ApiError('email_taken');
    throw error;
  }
}

export async function renameAccount(
  ctx: CloudContext,
  customerId: number,
  displayName: string,
): Promise<void> {
  await ctx.db
    .updateTable('customers')
    .set({ display_name: displayName })
    .where('id', '=', customerId)
    .execute();
}
