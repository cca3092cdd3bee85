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

/** Writes one action; `db` is the transaction of the change it records. */
export async function recordMemberAction(
  db: Database,
  at: Date,
  action: { companyId: number; by: ActingMember; name: MemberActionName; detail?: string | null },
): Promise<void> {
  await db
    .insertInto('member_actions')
    .values({
      company_id: action.companyId,
      at,
      customer_id: action.by.customerId,
      member: action.by.name,
      action: action.name,
      detail: action.detail ?? null,
    })
    .execute();
}

/** One action as the record keeps it. */
export interface MemberAction {
  id: number;
  at: Date;
  member: string;
  action: MemberActionName;
  detail: string | null;
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
    .select(['id', 'at', 'member', 'action', 'detail'])
    .where('company_id', '=', companyId)
    .orderBy('id', 'desc')
    .limit(limit + 1);
  if (options.before !== undefined) query = query.where('id', '<', String(options.before));
  const rows = await query.execute();
  const actions = rows.slice(0, limit).map((row) => ({ ...row, id: Number(row.id), at: new Date(row.at) }));
  return { actions, older: rows.length > limit ? actions.at(-1)!.id : null };
}
