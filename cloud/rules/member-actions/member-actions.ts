import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';
import type { MemberActionName } from '../../foundation/db/schema.js';
import { accountLabel } from '../customers/customers.js';

/**
 * The record of what a company's members did (docs/design.md section 11.8): who, what and when, for every change
 * made from the company area. Each change writes its row in its own transaction, as the operators' record does
 * (cloud/rules/operators/actions.ts), so the record can neither miss a change nor claim one that was rolled
 * back. A viewer changes nothing, so nothing of theirs is ever recorded.
 */

/** The signed-in member acting, as the record shows them: "Ann <ann@example.com>". */
export interface ActingMember {
  readonly customerId: number;
  readonly name: string;
}

export function actingMember(account: {
  customerId: number;
  displayName: string;
  email: string | null;
}): ActingMember {
  return { customerId: account.customerId, name: accountLabel(account.displayName, account.email) };
}

/**
 * Writes one action; `db` is the transaction of the change it records. An action on a company's sandbox
 * (docs/design.md section 11.9) goes into the company's own record, marked: the sandbox has no members, and its
 * changes are made by the company's.
 */
export async function recordMemberAction(
  db: Database,
  at: Date,
  action: { companyId: number; by: ActingMember; name: MemberActionName; detail?: string | null },
): Promise<void> {
  await db
    .insertInto('member_actions')
    .columns(['company_id', 'at', 'customer_id', 'member', 'action', 'detail', 'sandbox'])
    .expression((eb) =>
      eb
        .selectFrom('companies')
        .select((inner) => [
          inner.fn.coalesce('companies.sandbox_of', 'companies.id').as('company_id'),
          inner.val(at).as('at'),
          inner.val(action.by.customerId).as('customer_id'),
          inner.val(action.by.name).as('member'),
          inner.val(action.name).as('action'),
          inner.val(action.detail ?? null).as('detail'),
          inner('companies.sandbox_of', 'is not', null).as('sandbox'),
        ])
        .where('companies.id', '=', action.companyId),
    )
    .execute();
}

/** One action as the record keeps it. */
export interface MemberAction {
  id: number;
  at: Date;
  member: string;
  action: MemberActionName;
  detail: string | null;
  /** Done in the company's sandbox. */
  sandbox: boolean;
}

/** Actions a page of the record shows. */
export const MEMBER_ACTIONS_PAGE = 50;

/** The newest actions an operator sees of a company, on the console's page and in the operator API's answer. */
export const MEMBER_ACTIONS_SHOWN = 20;

/** A page of the company's record, newest first, below `before` (an action's id); `older` starts the next page. */
export async function memberActions(
  ctx: CloudContext,
  companyId: number,
  options: { before?: number | undefined; limit?: number } = {},
): Promise<{ actions: MemberAction[]; older: number | null }> {
  const limit = options.limit ?? MEMBER_ACTIONS_PAGE;
  let query = ctx.db
    .selectFrom('member_actions')
    .select(['id', 'at', 'member', 'action', 'detail', 'sandbox'])
    .where('company_id', '=', companyId)
    .orderBy('id', 'desc')
    .limit(limit + 1);
  if (options.before !== undefined) query = query.where('id', '<', String(options.before));
  const rows = await query.execute();
  const actions = rows.slice(0, limit).map((row) => ({ ...row, id: Number(row.id), at: new Date(row.at) }));
  return { actions, older: rows.length > limit ? actions.at(-1)!.id : null };
}
