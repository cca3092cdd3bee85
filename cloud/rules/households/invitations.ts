import { createHash, randomBytes } from 'node:crypto';
import type { Transaction } from 'kysely';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';
import type { DB } from '../../foundation/db/schema.js';
import { momentText } from '../../foundation/web/readable-time.js';
import { emailAddress } from '../sign-in-codes/email-address.js';
import { standingFor } from './barrier-roles.js';

/**
 * Invitations to a barrier's household (docs/design.md section 9.2). The owner names an e-mail address; the link
 * e-mailed to it carries a random 32-byte token of which only the SHA-256 is kept, as sessions keep theirs, so
 * the database never holds a link that works. An invitation lasts 7 days and is used once, and only the account
 * whose confirmed address is the invited one accepts it: the link may be forwarded or seen over a shoulder, and
 * the owner chose a person, named by their address, not whoever holds the link.
 */
export const INVITATION_LIFETIME_MS = 7 * 24 * 3600 * 1000;
/** Members and pending invitations of one barrier together: a household, not a company's staff. */
export const HOUSEHOLD_MOST = 10;
/** Invitations one owner sends in 24 hours, across their barriers: each is an e-mail to a stranger's address. */
export const INVITATIONS_PER_DAY = 20;
const DAY_MS = 24 * 3600 * 1000;

/** What inviting stands on beyond the ground: something that e-mails a notice (cloud/links/mail/mailer.ts). */
export interface HouseholdsContext extends CloudContext {
  readonly mailer: { sendNotice(message: { to: string; subject: string; text: string }): Promise<void> };
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * The owner invites an address to share the barrier, and it is e-mailed the link. Refused with a reason to show
 * beside the field: an address that is not one, the owner's own, a member's, one already invited and pending;
 * a household already at its size (409 `household_full`) and an owner past the day's invitations (429
 * `too_many_attempts`). The checks and the insert hold the barrier's row, so two forms at once cannot pass the
 * size together. An e-mail that cannot be sent takes its invitation back (503 `email_unavailable`).
 */
export async function inviteToBarrier(
  ctx: HouseholdsContext,
  input: { customerId: number; deviceId: string; email: string; mayGrant: boolean },
): Promise<{ invitationId: number; expiresAt: Date }> {
  const parsed = emailAddress.safeParse(input.email);
  if (!parsed.success) {
    const message = parsed.error.issues[0]?.message ?? 'Enter an e-mail address like name@example.com';
    throw new ApiError('invalid_field', { field: 'email', message });
  }
  const email = parsed.data;
  const now = ctx.clock.now();
  const token = randomBytes(32).toString('base64url');
  const invited = await ctx.db.transaction().execute(async (trx) => {
    const standing = await standingFor(trx, {
      customerId: input.customerId,
      deviceId: input.deviceId,
      need: 'own',
    });
    const device = await trx
      .selectFrom('devices')
      .select(['name', 'label', 'time_zone'])
      .where('id', '=', input.deviceId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    await checkInvitable(trx, { ...input, email, now });
    const expiresAt = new Date(now.getTime() + INVITATION_LIFETIME_MS);
    const row = await trx
      .insertInto('barrier_invitations')
      .values({
        device_id: input.deviceId,
        email,
        may_grant: input.mayGrant,
        token_hash: hashToken(token),
        invited_by: input.customerId,
        created_at: now,
        expires_at: expiresAt,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return {
      invitationId: row.id,
      expiresAt,
      barrier: device.name ?? device.label,
      owner: standing.ownerName,
      zone: device.time_zone,
    };
  });
  try {
    await ctx.mailer.sendNotice({
      to: email,
      subject: `${invited.owner} invites you to share ${invited.barrier} on Gatelink`,
      text: invitationText({ ...invited, url: `${ctx.baseUrl()}/invitations/${token}` }),
    });
  } catch (error) {
    ctx.log.error({ err: error }, 'an invitation could not be e-mailed');
    // Nobody holds its link: it would only take a place in the household and in the day's count.
    await ctx.db.deleteFrom('barrier_invitations').where('id', '=', invited.invitationId).execute();
    throw new ApiError('email_unavailable', {
      message: 'We could not send the invitation just now; try again in a few minutes.',
    });
  }
  return { invitationId: invited.invitationId, expiresAt: invited.expiresAt };
}

async function checkInvitable(
  trx: Transaction<DB>,
  input: { customerId: number; deviceId: string; email: string; now: Date },
): Promise<void> {
  const refuse = (message: string) => new ApiError('invalid_field', { field: 'email', message });
  const owner = await trx
    .selectFrom('customers')
    .select('email')
    .where('id', '=', input.customerId)
    .executeTakeFirstOrThrow();
  if (owner.email === input.email) throw refuse('That is your own address: you already have this barrier.');
  const member = await trx
    .selectFrom('barrier_members')
    .innerJoin('customers', 'customers.id', 'barrier_members.customer_id')
    .select('customers.id')
    .where('barrier_members.device_id', '=', input.deviceId)
    .where('customers.email', '=', input.email)
    .executeTakeFirst();
  if (member) throw refuse('Someone with this address already shares this barrier.');
  const pending = await pendingInvitations(trx, input.deviceId, input.now)
    .where('email', '=', input.email)
    .executeTakeFirst();
  if (pending) throw refuse('This address has an invitation waiting: withdraw it first to send a new one.');
  const members = await trx
    .selectFrom('barrier_members')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('device_id', '=', input.deviceId)
    .executeTakeFirstOrThrow();
  const waiting = await pendingInvitations(trx, input.deviceId, input.now)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  const today = await trx
    .selectFrom('barrier_invitations')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('invited_by', '=', input.customerId)
    .where('created_at', '>', new Date(input.now.getTime() - DAY_MS))
    .executeTakeFirstOrThrow();
  if (Number(members.n) + Number(waiting.n) >= HOUSEHOLD_MOST) {
    throw new ApiError('household_full', {
      message: `A barrier is shared with at most ${HOUSEHOLD_MOST} people, invitations waiting included: remove someone or withdraw an invitation first.`,
    });
  }
  if (Number(today.n) >= INVITATIONS_PER_DAY) {
    throw new ApiError('too_many_attempts', {
      message: `You have sent ${INVITATIONS_PER_DAY} invitations in the last 24 hours; try again tomorrow.`,
    });
  }
}

/** Invitations of the barrier still waiting: neither accepted, withdrawn nor past their 7 days. */
export function pendingInvitations(db: Database, deviceId: string, now: Date) {
  return db
    .selectFrom('barrier_invitations')
    .where('device_id', '=', deviceId)
    .where('accepted_at', 'is', null)
    .where('withdrawn_at', 'is', null)
    .where('expires_at', '>', now);
}

/** The e-mail: who invites, to what, what accepting lets the reader do, until when, and that it works once. */
/** The invitation's end is said in the barrier's zone, named: the household lives there, the invitee maybe too. */
function invitationText(input: {
  owner: string;
  barrier: string;
  url: string;
  expiresAt: Date;
  zone: string;
}): string {
  return [
    `${input.owner} invites you to share their barrier ${input.barrier} on Gatelink: you will see who may open`,
    'it and when it was opened, and, if they allowed it, give and withdraw companies’ access.',
    '',
    `To accept, open ${input.url}`,
    'and sign in or sign up with this e-mail address.',
    `The link works once, for 7 days: until ${momentText(input.expiresAt, input.zone)}.`,
    '',
    'If you do not know them, ignore this e-mail: nothing happens unless you accept.',
  ].join('\n');
}

/** What an invitation's link finds, for its page: nothing, or the invitation and where it stands. */
export type InvitationView =
  | { kind: 'unknown' }
  | {
      kind: 'open' | 'expired' | 'withdrawn' | 'used';
      invitation: {
        id: number;
        deviceId: string;
        email: string;
        mayGrant: boolean;
        barrierName: string;
        ownerName: string;
        expiresAt: Date;
      };
    };

/** Reads the invitation a link's token names; reading changes nothing (messengers fetch links to preview them). */
export async function invitationView(
  db: Database,
  input: { token: string; now: Date },
): Promise<InvitationView> {
  const row = await invitationRows(db).where('token_hash', '=', hashToken(input.token)).executeTakeFirst();
  if (!row) return { kind: 'unknown' };
  return {
    kind: stateOf(row, input.now),
    invitation: {
      id: row.id,
      deviceId: row.device_id,
      email: row.email,
      mayGrant: row.may_grant,
      barrierName: row.device_name ?? row.device_label,
      ownerName: row.owner_name,
      expiresAt: row.expires_at,
    },
  };
}

function invitationRows(db: Database) {
  return db
    .selectFrom('barrier_invitations')
    .innerJoin('devices', 'devices.id', 'barrier_invitations.device_id')
    .innerJoin('customers as owner', 'owner.id', 'barrier_invitations.invited_by')
    .select([
      'barrier_invitations.id',
      'barrier_invitations.device_id',
      'barrier_invitations.email',
      'barrier_invitations.may_grant',
      'barrier_invitations.expires_at',
      'barrier_invitations.accepted_at',
      'barrier_invitations.accepted_by',
      'barrier_invitations.withdrawn_at',
      'devices.name as device_name',
      'devices.label as device_label',
      'owner.display_name as owner_name',
    ]);
}

/** Used before withdrawn before expired: a link that did its work says so, whatever happened since. */
function stateOf(
  row: { accepted_at: Date | null; withdrawn_at: Date | null; expires_at: Date },
  now: Date,
): 'open' | 'expired' | 'withdrawn' | 'used' {
  if (row.accepted_at) return 'used';
  if (row.withdrawn_at) return 'withdrawn';
  if (row.expires_at <= now) return 'expired';
  return 'open';
}

/**
 * The signed-in account accepts: it becomes a member, and the invitation is used, in one transaction that holds
 * the invitation's row, so two submits at once make one member and the second finds it done. The same account
 * submitting again is answered as the first; anything else is refused and writes nothing: an unknown token (404
 * `not_found`), one used by another account, withdrawn or expired (409 `invalid_state`), an account whose
 * confirmed address is not the invited one (403 `forbidden`), and the barrier's own owner (409 `conflict`).
 */
export async function acceptInvitation(
  ctx: CloudContext,
  input: { token: string; customerId: number },
): Promise<{ deviceId: string }> {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const invitation = await trx
      .selectFrom('barrier_invitations')
      .selectAll()
      .where('token_hash', '=', hashToken(input.token))
      .forUpdate()
      .executeTakeFirst();
    if (!invitation) throw new ApiError('not_found', { message: 'No invitation has this link.' });
    if (invitation.accepted_by === input.customerId) return { deviceId: invitation.device_id };
    const state = stateOf(invitation, now);
    if (state !== 'open') {
      throw new ApiError('invalid_state', { message: `This invitation is ${state}.` });
    }
    const account = await trx
      .selectFrom('customers')
      .select(['email', 'email_verified_at'])
      .where('id', '=', input.customerId)
      .executeTakeFirstOrThrow();
    if (account.email !== invitation.email || account.email_verified_at === null) {
      throw new ApiError('forbidden', { message: 'This invitation is for another e-mail address.' });
    }
    const device = await trx
      .selectFrom('devices')
      .select('customer_id')
      .where('id', '=', invitation.device_id)
      .executeTakeFirstOrThrow();
    if (device.customer_id === input.customerId) {
      throw new ApiError('conflict', { message: 'This barrier is already yours.' });
    }
    await trx
      .insertInto('barrier_members')
      .values({
        device_id: invitation.device_id,
        customer_id: input.customerId,
        may_grant: invitation.may_grant,
        added_by: invitation.invited_by,
        joined_at: now,
      })
      // Already a member (invited twice by mistake): the invitation is used all the same, and the role kept.
      .onConflict((conflict) => conflict.columns(['device_id', 'customer_id']).doNothing())
      .execute();
    await trx
      .updateTable('barrier_invitations')
      .set({ accepted_at: now, accepted_by: input.customerId })
      .where('id', '=', invitation.id)
      .execute();
    return { deviceId: invitation.device_id };
  });
}

/** The owner withdraws a pending invitation; its link then says so. Anything else answers 404. */
export async function withdrawInvitation(
  ctx: CloudContext,
  input: { customerId: number; deviceId: string; invitationId: number },
): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.transaction().execute(async (trx) => {
    await standingFor(trx, { customerId: input.customerId, deviceId: input.deviceId, need: 'own' });
    const withdrawn = await trx
      .updateTable('barrier_invitations')
      .set({ withdrawn_at: now })
      .where('id', '=', input.invitationId)
      .where('device_id', '=', input.deviceId)
      .where('accepted_at', 'is', null)
      .where('withdrawn_at', 'is', null)
      .where('expires_at', '>', now)
      .returning('id')
      .executeTakeFirst();
    if (!withdrawn) throw new ApiError('not_found', { message: 'No such invitation waiting.' });
  });
}

/** "a***@example.com": enough for its holder to recognise the address, not enough to give it away. */
export function maskedAddress(email: string): string {
  const at = email.lastIndexOf('@');
  return `${email.slice(0, 1)}***${email.slice(at)}`;
}
