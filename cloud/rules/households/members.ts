import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';
import { NO_SUCH_BARRIER, standingFor } from './barrier-roles.js';
import { endMembership } from './household-lifecycle.js';
import { pendingInvitations } from './invitations.js';

/**
 * The people who share a barrier (docs/design.md section 9.2), as its owner sees them, and the ways a membership
 * ends or changes: the owner removes a member or lets them grant or not, a member leaves. Once a membership ends,
 * the barrier answers that account 404 everywhere, as any barrier not theirs.
 */
export interface Household {
  members: { customerId: number; name: string; email: string | null; mayGrant: boolean; joinedAt: Date }[];
  invitations: { id: number; email: string; mayGrant: boolean; createdAt: Date; expiresAt: Date }[];
}

/** The barrier's members, longest first, and its invitations still waiting, newest first. */
export async function householdOf(db: Database, input: { deviceId: string; now: Date }): Promise<Household> {
  const [members, invitations] = await Promise.all([
    db
      .selectFrom('barrier_members')
      .innerJoin('customers', 'customers.id', 'barrier_members.customer_id')
      .select([
        'customers.id',
        'customers.display_name',
        'customers.email',
        'barrier_members.may_grant',
        'barrier_members.joined_at',
      ])
      .where('barrier_members.device_id', '=', input.deviceId)
      .orderBy('barrier_members.joined_at')
      .orderBy('customers.id')
      .execute(),
    pendingInvitations(db, input.deviceId, input.now)
      .select(['id', 'email', 'may_grant', 'created_at', 'expires_at'])
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute(),
  ]);
  return {
    members: members.map((row) => ({
      customerId: row.id,
      name: row.display_name,
      email: row.email,
      mayGrant: row.may_grant,
      joinedAt: row.joined_at,
    })),
    invitations: invitations.map((row) => ({
      id: row.id,
      email: row.email,
      mayGrant: row.may_grant,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
    })),
  };
}

/** A member leaves the barrier; someone who is not a member of it gets 404, as for a barrier not theirs. */
export async function leaveBarrier(
  db: Database,
  input: { customerId: number; deviceId: string },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const left = await trx
      .deleteFrom('barrier_members')
      .where('device_id', '=', input.deviceId)
      .where('customer_id', '=', input.customerId)
      .returning('customer_id')
      .executeTakeFirst();
    if (!left) throw new ApiError('not_found', { message: NO_SUCH_BARRIER });
    await endMembership(trx, input);
  });
}

/** The owner removes a member; anyone but the owner, and someone who is not a member, get 404. */
export async function removeMember(
  ctx: CloudContext,
  input: { customerId: number; deviceId: string; memberId: number },
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await standingFor(trx, { customerId: input.customerId, deviceId: input.deviceId, need: 'own' });
    const removed = await trx
      .deleteFrom('barrier_members')
      .where('device_id', '=', input.deviceId)
      .where('customer_id', '=', input.memberId)
      .returning('customer_id')
      .executeTakeFirst();
    if (!removed) throw new ApiError('not_found', { message: 'No such member of this barrier.' });
    await endMembership(trx, { deviceId: input.deviceId, customerId: input.memberId });
  });
}

/** The owner lets a member grant and withdraw access, or only look; as with removal, anyone else gets 404. */
export async function setMayGrant(
  ctx: CloudContext,
  input: { customerId: number; deviceId: string; memberId: number; mayGrant: boolean },
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await standingFor(trx, { customerId: input.customerId, deviceId: input.deviceId, need: 'own' });
    const changed = await trx
      .updateTable('barrier_members')
      .set({ may_grant: input.mayGrant })
      .where('device_id', '=', input.deviceId)
      .where('customer_id', '=', input.memberId)
      .returning('customer_id')
      .executeTakeFirst();
    if (!changed) throw new ApiError('not_found', { message: 'No such member of this barrier.' });
  });
}
