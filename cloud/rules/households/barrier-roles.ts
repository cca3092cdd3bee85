import { ApiError } from '../../../shared/errors.js';
import type { Database } from '../../foundation/db/database.js';

/**
 * What an account may do on a barrier (docs/design.md section 9.2), decided here and nowhere else: its owner
 * (`devices.customer_id`) does everything; a member who may grant grants requests to it and withdraws and
 * reshapes its keys; a member who may only look reads its page, journal and keys. Anyone else is nobody, and
 * nobody is answered exactly like a barrier that does not exist.
 */
export type BarrierRole = 'owner' | 'granter' | 'looker';

/** What an action needs: to look at the barrier, to grant and withdraw on it, or to own it. */
export type BarrierNeed = 'look' | 'grant' | 'own';

const ROLES_FOR: Record<BarrierNeed, readonly BarrierRole[]> = {
  look: ['owner', 'granter', 'looker'],
  grant: ['owner', 'granter'],
  own: ['owner'],
};

export function roleAllows(role: BarrierRole, need: BarrierNeed): boolean {
  return ROLES_FOR[need].includes(role);
}

/** The role of `customerId` from the barrier's owner and the customer's membership row (null: none). */
export function roleOf(input: {
  customerId: number;
  ownerId: number;
  mayGrant: boolean | null;
}): BarrierRole {
  if (input.ownerId === input.customerId) return 'owner';
  return input.mayGrant ? 'granter' : 'looker';
}

/** An account's standing on a barrier: its role, and the owner, whose keys and journal the household shares. */
export interface BarrierStanding {
  deviceId: string;
  role: BarrierRole;
  ownerId: number;
  ownerName: string;
}

/** The message every refusal carries: the same as for a barrier that does not exist. */
export const NO_SUCH_BARRIER = 'No such barrier among yours.';

/**
 * The paired barriers `customerId` owns or is a member of, with the owner and the membership's `may_grant`; callers
 * add the columns they show. The membership is joined on the customer, so a barrier is one row.
 */
export function householdBarriers(db: Database, customerId: number) {
  return db
    .selectFrom('devices')
    .innerJoin('customers as owner', 'owner.id', 'devices.customer_id')
    .leftJoin('barrier_members as membership', (join) =>
      join.onRef('membership.device_id', '=', 'devices.id').on('membership.customer_id', '=', customerId),
    )
    .select([
      'devices.id',
      'owner.id as owner_id',
      'owner.display_name as owner_name',
      'membership.may_grant',
    ])
    .where((eb) =>
      eb.or([eb('devices.customer_id', '=', customerId), eb('membership.customer_id', 'is not', null)]),
    );
}

/** The standing of `customerId` on the barrier, or null when they are nobody there. */
export async function standingOf(
  db: Database,
  input: { customerId: number; deviceId: string },
): Promise<BarrierStanding | null> {
  const row = await householdBarriers(db, input.customerId)
    .where('devices.id', '=', input.deviceId)
    .executeTakeFirst();
  if (!row) return null;
  return {
    deviceId: row.id,
    role: roleOf({ customerId: input.customerId, ownerId: row.owner_id, mayGrant: row.may_grant }),
    ownerId: row.owner_id,
    ownerName: row.owner_name,
  };
}

/**
 * The standing of `customerId` on the barrier when it allows `need`; else 404 `not_found`, the answer of a barrier
 * that does not exist, so that a member who may only look learns nothing more from a forged form than a stranger.
 * Given a transaction, it reads within it, so an act and the check it rests on commit together.
 */
export async function standingFor(
  db: Database,
  input: { customerId: number; deviceId: string; need: BarrierNeed },
): Promise<BarrierStanding> {
  const standing = await standingOf(db, input);
  if (!standing || !roleAllows(standing.role, input.need)) {
    throw new ApiError('not_found', { message: NO_SUCH_BARRIER });
  }
  return standing;
}
