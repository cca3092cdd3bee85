import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';

/**
 * The record of what operators did (docs/design.md section 11.5): who, what, to which company, when, and why.
 * Every change an operator makes writes its row in the same transaction as the change itself, so that the
 * history can neither miss a change nor claim one that was rolled back.
 */

/** Who acted, as the history shows them: an operator account ("Ann <ann@example.com>"), the token, the API. */
export interface OperatorActor {
  readonly name: string;
  /** The operator's own account, when they acted signed in with it; null for the token and the API. */
  readonly customerId: number | null;
}

export const OPERATOR_API: OperatorActor = { name: 'operator API', customerId: null };
export const OPERATOR_TOKEN: OperatorActor = { name: 'operator token', customerId: null };

export type OperatorActionName =
  | 'add'
  | 'approve'
  | 'reject'
  | 'suspend'
  | 'resume'
  | 'secret'
  | 'confirm-key'
  | 'grant-operator'
  | 'withdraw-operator';

export interface OperatorAction {
  at: Date;
  operator: string;
  action: string;
  /** The reason given (a rejection, a suspension), or what the action concerned (a key's fingerprint, an account). */
  reason: string | null;
}

/** Writes one action; `db` is the transaction of the change it records. */
export async function recordAction(
  db: Database,
  at: Date,
  action: {
    actor: OperatorActor;
    name: OperatorActionName;
    companyId: number | null;
    reason?: string | null;
  },
): Promise<void> {
  await db
    .insertInto('operator_actions')
    .values({
      at,
      operator: action.actor.name,
      customer_id: action.actor.customerId,
      company_id: action.companyId,
      action: action.name,
      reason: action.reason ?? null,
    })
    .execute();
}

/** A company's history, newest first. */
export async function companyActions(ctx: CloudContext, companyId: number): Promise<OperatorAction[]> {
  return ctx.db
    .selectFrom('operator_actions')
    .select(['at', 'operator', 'action', 'reason'])
    .where('company_id', '=', companyId)
    .orderBy('id', 'desc')
    .limit(200)
    .execute();
}

/** The actions on operator rights (grants and withdrawals), newest first. */
export async function operatorRightsActions(ctx: CloudContext): Promise<OperatorAction[]> {
  return ctx.db
    .selectFrom('operator_actions')
    .select(['at', 'operator', 'action', 'reason'])
    .where('action', 'in', ['grant-operator', 'withdraw-operator'])
    .orderBy('id', 'desc')
    .limit(50)
    .execute();
}
