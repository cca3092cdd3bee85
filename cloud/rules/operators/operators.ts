import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { accountLabel } from '../customers/customers.js';
import { type OperatorActor, recordAction } from './actions.js';

/**
 * Accounts with operator rights (docs/design.md section 11.5): ordinary Gatelink accounts listed in `operators`,
 * who open the console signed in with their own passkeys or e-mail codes. Only a console signed in with the
 * operator token grants and withdraws the rights, by the account's confirmed e-mail address: an unconfirmed
 * address proves nothing about whose account it is (section 10.2).
 */
export interface OperatorAccount {
  customerId: number;
  displayName: string;
  email: string | null;
  addedAt: Date;
  addedBy: string;
}

/** How an operator account appears in the history: its name and address. */
export function accountActor(account: { customerId: number; displayName: string; email: string | null }) {
  const name = accountLabel(account.displayName, account.email);
  return { name, customerId: account.customerId } satisfies OperatorActor;
}

export async function isOperatorAccount(ctx: CloudContext, customerId: number): Promise<boolean> {
  const row = await ctx.db
    .selectFrom('operators')
    .select('customer_id')
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function listOperatorAccounts(ctx: CloudContext): Promise<OperatorAccount[]> {
  const rows = await ctx.db
    .selectFrom('operators')
    .innerJoin('customers', 'customers.id', 'operators.customer_id')
    .select([
      'operators.customer_id',
      'customers.display_name',
      'customers.email',
      'operators.added_at',
      'operators.added_by',
    ])
    .orderBy('operators.added_at')
    .execute();
  return rows.map((row) => ({
    customerId: row.customer_id,
    displayName: row.display_name,
    email: row.email,
    addedAt: row.added_at,
    addedBy: row.added_by,
  }));
}

/**
 * Gives operator rights to the account whose confirmed address is `email`; `added` is false when it had them.
 * No such account: 404, said on the form.
 */
export async function grantOperator(
  ctx: CloudContext,
  email: string,
  actor: OperatorActor,
): Promise<{ added: boolean; account: { customerId: number; displayName: string } }> {
  return ctx.db.transaction().execute(async (trx) => {
    const account = await trx
      .selectFrom('customers')
      .select(['id', 'display_name', 'email'])
      .where('email', '=', email)
      .where('email_verified_at', 'is not', null)
      .executeTakeFirst();
    if (!account) {
      throw new ApiError('not_found', {
        message: 'No Gatelink account has confirmed this address: they sign up and confirm it first.',
      });
    }
    const now = ctx.clock.now();
    const inserted = await trx
      .insertInto('operators')
      .values({ customer_id: account.id, added_at: now, added_by: actor.name })
      .onConflict((conflict) => conflict.column('customer_id').doNothing())
      .returning('customer_id')
      .executeTakeFirst();
    const added = inserted !== undefined;
    if (added) {
      const subject = accountLabel(account.display_name, email);
      await recordAction(trx, now, { actor, name: 'grant-operator', companyId: null, reason: subject });
    }
    return { added, account: { customerId: account.id, displayName: account.display_name } };
  });
}

/** Withdraws an account's operator rights; false when it had none. */
export async function withdrawOperator(
  ctx: CloudContext,
  customerId: number,
  actor: OperatorActor,
): Promise<boolean> {
  return ctx.db.transaction().execute(async (trx) => {
    const removed = await trx
      .deleteFrom('operators')
      .where('customer_id', '=', customerId)
      .returning('customer_id')
      .executeTakeFirst();
    if (!removed) return false;
    const account = await trx
      .selectFrom('customers')
      .select(['display_name', 'email'])
      .where('id', '=', customerId)
      .executeTakeFirstOrThrow();
    const subject = accountLabel(account.display_name, account.email);
    await recordAction(trx, ctx.clock.now(), {
      actor,
      name: 'withdraw-operator',
      companyId: null,
      reason: subject,
    });
    return true;
  });
}
