import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { momentText } from '../../cloud/foundation/web/readable-time.js';
import { customerBarrier, customerBarriers } from '../../cloud/rules/devices/customer-barriers.js';
import {
  removeBarrier,
  replaceController,
  retireDevice,
} from '../../cloud/rules/devices/device-lifecycle.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { standingFor, standingOf } from '../../cloud/rules/households/barrier-roles.js';
import {
  acceptInvitation,
  HOUSEHOLD_MOST,
  INVITATION_LIFETIME_MS,
  INVITATIONS_PER_DAY,
  invitationView,
  inviteToBarrier,
  withdrawInvitation,
} from '../../cloud/rules/households/invitations.js';
import {
  householdOf,
  leaveBarrier,
  removeMember,
  setMayGrant,
} from '../../cloud/rules/households/members.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { insertBarrier } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { mailOutbox } from '../support/mail-outbox.js';

/**
 * A barrier's household (docs/design.md section 9.2) as its rules decide it: the one role rule, invitations by
 * e-mail with their lifetime, single use, limits and address, leaving and removal, and what the barrier's life
 * (removal, retirement, changing hands, replacement) does to its members.
 */
const clock = new FakeClock(Date.parse('2026-11-27T10:00:00Z'));
const outbox = mailOutbox();
const mail = outbox.notices;
let database: TestDatabase;
let cloud: TestCloud;
let serial = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({
    database,
    clock,
    mailer: outbox.mailer,
  });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

// Each test starts a day later, so that the owners' daily invitations of one test do not count in the next.
beforeEach(() => clock.advance(2 * 24 * 3600 * 1000));

/** An account with a confirmed address, as signing in by code leaves it. */
async function person(name: string): Promise<{ id: number; email: string }> {
  serial += 1;
  const email = `${name.toLowerCase().replace(/\W+/g, '.')}.${serial}@example.com`;
  const row = await cloud.ctx.db
    .insertInto('customers')
    .values({ display_name: name, email, email_verified_at: clock.now(), created_at: clock.now() })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, email };
}

/** The token of the newest invitation e-mailed to `email`, read from its link as the person would follow it. */
function tokenFor(email: string): string {
  const message = mail.filter((sent) => sent.to === email).at(-1);
  expect(message, `no invitation to ${email}`).toBeDefined();
  const token = /\/invitations\/([A-Za-z0-9_-]{43})/.exec(message!.text)?.[1];
  expect(token, 'no link in the e-mail').toBeDefined();
  return token!;
}

async function invited(
  owner: { id: number },
  deviceId: string,
  guest: { email: string },
  mayGrant = false,
): Promise<string> {
  await inviteToBarrier(cloud.ctx, { customerId: owner.id, deviceId, email: guest.email, mayGrant });
  return tokenFor(guest.email);
}

async function member(owner: { id: number }, deviceId: string, mayGrant = false) {
  const guest = await person('Member');
  const token = await invited(owner, deviceId, guest, mayGrant);
  await acceptInvitation(cloud.ctx, { token, customerId: guest.id });
  return guest;
}

async function membersOf(deviceId: string) {
  return cloud.ctx.db
    .selectFrom('barrier_members')
    .select(['customer_id', 'may_grant'])
    .where('device_id', '=', deviceId)
    .orderBy('customer_id')
    .execute();
}

describe('the role rule', () => {
  it('tells owner, granting member, looking member and nobody apart, and answers nobody like no barrier', async () => {
    const owner = await person('Anna Owner');
    const { deviceId } = await insertBarrier(cloud, owner.id, { name: 'Mill Lane 4' });
    const granter = await member(owner, deviceId, true);
    const looker = await member(owner, deviceId, false);
    const stranger = await person('Stranger');

    const role = async (customerId: number) =>
      (await standingOf(cloud.ctx.db, { customerId, deviceId }))?.role;
    expect(await role(owner.id)).toBe('owner');
    expect(await role(granter.id)).toBe('granter');
    expect(await role(looker.id)).toBe('looker');
    expect(await role(stranger.id)).toBeUndefined();

    const refusal = (customerId: number, need: 'look' | 'grant' | 'own', id = deviceId) =>
      standingFor(cloud.ctx.db, { customerId, deviceId: id, need }).then(
        () => null,
        (error: { code: string; message: string }) => ({ code: error.code, message: error.message }),
      );
    const unknown = await refusal(owner.id, 'look', 'D0000000000');
    expect(unknown).toEqual({ code: 'not_found', message: 'No such barrier among yours.' });
    expect(await refusal(stranger.id, 'look')).toEqual(unknown);
    expect(await refusal(looker.id, 'look')).toBeNull();
    expect(await refusal(looker.id, 'grant')).toEqual(unknown);
    expect(await refusal(granter.id, 'grant')).toBeNull();
    expect(await refusal(granter.id, 'own')).toEqual(unknown);
    expect(await refusal(owner.id, 'own')).toBeNull();

    const shared = await customerBarriers(cloud.ctx.db, looker.id);
    expect(shared).toEqual([
      expect.objectContaining({ id: deviceId, name: 'Mill Lane 4', role: 'looker', sharedBy: 'Anna Owner' }),
    ]);
    expect((await customerBarrier(cloud.ctx.db, owner.id, deviceId, 'own')).sharedBy).toBeNull();
    await expect(customerBarrier(cloud.ctx.db, looker.id, deviceId, 'grant')).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});

describe('invitations', () => {
  it('say when their link ends in the barrier’s time zone, named', async () => {
    const owner = await person('Zoe Owner');
    const { deviceId } = await insertBarrier(cloud, owner.id, { name: 'Berlin flat' });
    await cloud.ctx.db
      .updateTable('devices')
      .set({ time_zone: 'Europe/Berlin' })
      .where('id', '=', deviceId)
      .execute();
    const guest = await person('Yan Guest');
    await invited(owner, deviceId, guest, false);
    const end = new Date(cloud.ctx.clock.now().getTime() + INVITATION_LIFETIME_MS);
    expect(mail.at(-1)!.text).toContain(`until ${momentText(end, 'Europe/Berlin')}.`);
    expect(mail.at(-1)!.text).toContain('(Europe/Berlin)');
  });

  it('e-mails a link whose token is kept only as its hash, and the invited address accepts it once', async () => {
    const owner = await person('Anna Owner');
    const { deviceId } = await insertBarrier(cloud, owner.id, { name: 'Mill Lane 4' });
    const guest = await person('Ben Guest');
    const token = await invited(owner, deviceId, guest, true);
    const message = mail.at(-1)!;
    expect(message.subject).toBe('Anna Owner invites you to share Mill Lane 4 on Gatelink');
    expect(message.text).toContain(`${cloud.ctx.baseUrl()}/invitations/${token}`);
    expect(message.text).toContain(
      `The link works once, for 7 days: until ${momentText(new Date(cloud.ctx.clock.now().getTime() + INVITATION_LIFETIME_MS), 'UTC')}.`,
    );
    const stored = await cloud.ctx.db
      .selectFrom('barrier_invitations')
      .selectAll()
      .where('device_id', '=', deviceId)
      .execute();
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(stored[0]!.expires_at.getTime() - stored[0]!.created_at.getTime()).toBe(INVITATION_LIFETIME_MS);

    expect(await acceptInvitation(cloud.ctx, { token, customerId: guest.id })).toEqual({ deviceId });
    // A double submit is answered as the first.
    expect(await acceptInvitation(cloud.ctx, { token, customerId: guest.id })).toEqual({ deviceId });
    expect(await membersOf(deviceId)).toEqual([{ customer_id: guest.id, may_grant: true }]);
    expect((await invitationView(cloud.ctx.db, { token, now: clock.now() })).kind).toBe('used');

    const other = await person('Carla Other');
    await cloud.ctx.db
      .updateTable('customers')
      .set({ email: guest.email.replace('ben', 'x') })
      .where('id', '=', other.id)
      .execute();
    await expect(acceptInvitation(cloud.ctx, { token, customerId: other.id })).rejects.toMatchObject({
      code: 'invalid_state',
    });
  });

  it('refuses another account, even one whose address is the same but unconfirmed, and writes nothing', async () => {
    const owner = await person('Anna Owner');
    const { deviceId } = await insertBarrier(cloud, owner.id);
    const guest = await person('Ben Guest');
    const token = await invited(owner, deviceId, guest);
    const other = await person('Carla Other');
    await expect(acceptInvitation(cloud.ctx, { token, customerId: other.id })).rejects.toMatchObject({
      code: 'forbidden',
      message: 'This invitation is for another e-mail address.',
    });
    await expect(acceptInvitation(cloud.ctx, { token, customerId: owner.id })).rejects.toMatchObject({
      code: 'forbidden',
    });
    expect(await membersOf(deviceId)).toEqual([]);
    expect((await invitationView(cloud.ctx.db, { token, now: clock.now() })).kind).toBe('open');
    await expect(
      acceptInvitation(cloud.ctx, { token: 'x'.repeat(43), customerId: guest.id }),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('expires after 7 days by the clock, and a withdrawn one says so', async () => {
    const owner = await person('Anna Owner');
    const { deviceId } = await insertBarrier(cloud, owner.id);
    const late = await person('Late Guest');
    const token = await invited(owner, deviceId, late);
    clock.advance(INVITATION_LIFETIME_MS - 1000);
    expect((await invitationView(cloud.ctx.db, { token, now: clock.now() })).kind).toBe('open');
    clock.advance(1000);
    expect((await invitationView(cloud.ctx.db, { token, now: clock.now() })).kind).toBe('expired');
    await expect(acceptInvitation(cloud.ctx, { token, customerId: late.id })).rejects.toMatchObject({
      code: 'invalid_state',
    });

    const withdrawnGuest = await person('Withdrawn Guest');
    const second = await invited(owner, deviceId, withdrawnGuest);
    const { invitations } = await householdOf(cloud.ctx.db, { deviceId, now: clock.now() });
    await withdrawInvitation(cloud.ctx, { customerId: owner.id, deviceId, invitationId: invitations[0]!.id });
    expect((await invitationView(cloud.ctx.db, { token: second, now: clock.now() })).kind).toBe('withdrawn');
    await expect(
      acceptInvitation(cloud.ctx, { token: second, customerId: withdrawnGuest.id }),
    ).rejects.toMatchObject({
      code: 'invalid_state',
    });
    expect(await membersOf(deviceId)).toEqual([]);
  });

  it('refuses the owner, a member and an address already waiting, each with its reason', async () => {
    const owner = await person('Anna Owner');
    const { deviceId } = await insertBarrier(cloud, owner.id);
    const joined = await member(owner, deviceId);
    const waiting = await person('Waiting');
    await invited(owner, deviceId, waiting);
    const problem = (email: string) =>
      inviteToBarrier(cloud.ctx, { customerId: owner.id, deviceId, email, mayGrant: false }).then(
        () => null,
        (error: { code: string; field?: string; message: string }) => [
          error.code,
          error.field,
          error.message,
        ],
      );
    expect(await problem(` ${owner.email.toUpperCase()} `)).toEqual([
      'invalid_field',
      'email',
      'That is your own address: you already have this barrier.',
    ]);
    expect(await problem(joined.email)).toEqual([
      'invalid_field',
      'email',
      'Someone with this address already shares this barrier.',
    ]);
    expect(await problem(waiting.email)).toEqual([
      'invalid_field',
      'email',
      'This address has an invitation waiting: withdraw it first to send a new one.',
    ]);
    expect((await problem('not an address'))?.[0]).toBe('invalid_field');
    // Only the owner invites: a member's attempt is a barrier that does not exist.
    await expect(
      inviteToBarrier(cloud.ctx, { customerId: joined.id, deviceId, email: 'x@example.com', mayGrant: true }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it(`holds a barrier to ${HOUSEHOLD_MOST} people and an owner to ${INVITATIONS_PER_DAY} invitations a day`, async () => {
    const owner = await person('Anna Owner');
    const { deviceId } = await insertBarrier(cloud, owner.id);
    await member(owner, deviceId);
    for (let i = 1; i < HOUSEHOLD_MOST; i += 1) {
      await inviteToBarrier(cloud.ctx, {
        customerId: owner.id,
        deviceId,
        email: `full${i}@example.com`,
        mayGrant: false,
      });
    }
    await expect(
      inviteToBarrier(cloud.ctx, {
        customerId: owner.id,
        deviceId,
        email: 'eleventh@example.com',
        mayGrant: false,
      }),
    ).rejects.toMatchObject({ code: 'household_full', status: 409 });

    const second = await insertBarrier(cloud, owner.id);
    const sentToday = HOUSEHOLD_MOST; // the member's invitation and the nine waiting
    for (let i = sentToday; i < INVITATIONS_PER_DAY; i += 1) {
      // A third barrier takes those the second cannot hold.
      const target =
        i - sentToday < HOUSEHOLD_MOST ? second.deviceId : (await insertBarrier(cloud, owner.id)).deviceId;
      await inviteToBarrier(cloud.ctx, {
        customerId: owner.id,
        deviceId: target,
        email: `day${i}@example.com`,
        mayGrant: false,
      });
    }
    const third = await insertBarrier(cloud, owner.id);
    await expect(
      inviteToBarrier(cloud.ctx, {
        customerId: owner.id,
        deviceId: third.deviceId,
        email: 'late@example.com',
        mayGrant: false,
      }),
    ).rejects.toMatchObject({ code: 'too_many_attempts', status: 429 });
    clock.advance(24 * 3600 * 1000);
    await inviteToBarrier(cloud.ctx, {
      customerId: owner.id,
      deviceId: third.deviceId,
      email: 'late@example.com',
      mayGrant: false,
    });
  });
});

describe('leaving and removal', () => {
  it('a member leaves, the owner removes and changes a member, and nobody else may', async () => {
    const owner = await person('Anna Owner');
    const { deviceId } = await insertBarrier(cloud, owner.id);
    const leaver = await member(owner, deviceId);
    const removed = await member(owner, deviceId, true);
    const changed = await member(owner, deviceId);

    await expect(
      removeMember(cloud.ctx, { customerId: removed.id, deviceId, memberId: changed.id }),
    ).rejects.toMatchObject({ code: 'not_found' });
    await expect(
      setMayGrant(cloud.ctx, { customerId: removed.id, deviceId, memberId: changed.id, mayGrant: true }),
    ).rejects.toMatchObject({ code: 'not_found' });

    // Each chose to be told of every opening by e-mail too: leaving or being removed takes the choice along.
    await cloud.ctx.db
      .insertInto('notification_choices')
      .values(
        [leaver, removed, changed].map((each) => ({
          device_id: deviceId,
          customer_id: each.id,
          tell: 'every',
          by_email: true,
          updated_at: clock.now(),
        })),
      )
      .execute();
    await leaveBarrier(cloud.ctx.db, { customerId: leaver.id, deviceId });
    await removeMember(cloud.ctx, { customerId: owner.id, deviceId, memberId: removed.id });
    const choices = await cloud.ctx.db
      .selectFrom('notification_choices')
      .select('customer_id')
      .where('device_id', '=', deviceId)
      .execute();
    expect(choices).toEqual([{ customer_id: changed.id }]);
    await setMayGrant(cloud.ctx, { customerId: owner.id, deviceId, memberId: changed.id, mayGrant: true });
    expect(await membersOf(deviceId)).toEqual([{ customer_id: changed.id, may_grant: true }]);
    for (const gone of [leaver, removed]) {
      await expect(customerBarrier(cloud.ctx.db, gone.id, deviceId, 'look')).rejects.toMatchObject({
        code: 'not_found',
      });
    }
    await expect(leaveBarrier(cloud.ctx.db, { customerId: leaver.id, deviceId })).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});

describe("a barrier's life and its household", () => {
  const accounts = { removeDevice: async () => {} };

  async function sharedBarrier() {
    const owner = await person('Anna Owner');
    const barrier = await insertBarrier(cloud, owner.id);
    const joined = await member(owner, barrier.deviceId, true);
    const waiting = await person('Waiting');
    const token = await invited(owner, barrier.deviceId, waiting);
    return { owner, deviceId: barrier.deviceId, joined, waiting, token };
  }

  /** A new controller, provisioned and on nobody's account, reporting the same gate. */
  async function freshController(): Promise<string> {
    const somebody = await person('Installer');
    const { deviceId } = await insertBarrier(cloud, somebody.id, { labels: ['Main gate'] });
    await cloud.ctx.db
      .updateTable('devices')
      .set({ customer_id: null, name: null, paired_at: null, provisioned_at: clock.now() })
      .where('id', '=', deviceId)
      .execute();
    return deviceId;
  }

  it('removal ends the memberships and withdraws the invitations waiting', async () => {
    const shared = await sharedBarrier();
    await removeBarrier(cloud.ctx, { customerId: shared.owner.id, deviceId: shared.deviceId });
    expect(await membersOf(shared.deviceId)).toEqual([]);
    expect((await invitationView(cloud.ctx.db, { token: shared.token, now: clock.now() })).kind).toBe(
      'withdrawn',
    );
    expect(await customerBarriers(cloud.ctx.db, shared.joined.id)).toEqual([]);
  });

  it('a member cannot remove the barrier', async () => {
    const shared = await sharedBarrier();
    await expect(
      removeBarrier(cloud.ctx, { customerId: shared.joined.id, deviceId: shared.deviceId }),
    ).rejects.toMatchObject({ code: 'not_found' });
    expect(await membersOf(shared.deviceId)).toHaveLength(1);
  });

  it('retiring the record ends them too', async () => {
    const shared = await sharedBarrier();
    await retireDevice(cloud.ctx, accounts, shared.deviceId);
    expect(await membersOf(shared.deviceId)).toEqual([]);
    expect((await invitationView(cloud.ctx.db, { token: shared.token, now: clock.now() })).kind).toBe(
      'unknown',
    );
  });

  it('a controller that changes hands leaves the household behind; paired again by its owner, it keeps it', async () => {
    const shared = await sharedBarrier();
    const setCode = (code: string) =>
      cloud.ctx.db
        .updateTable('devices')
        .set({ pairing_code: code, pairing_expires_at: new Date(clock.now().getTime() + 3600_000) })
        .where('id', '=', shared.deviceId)
        .execute();
    await setCode('ABCD2345');
    await pairDevice(cloud.ctx, { customerId: shared.owner.id, pairingCode: 'ABCD2345' });
    expect(await membersOf(shared.deviceId)).toHaveLength(1);
    const buyer = await person('New Owner');
    await setCode('XYZW6789');
    await pairDevice(cloud.ctx, { customerId: buyer.id, pairingCode: 'XYZW6789' });
    expect(await membersOf(shared.deviceId)).toEqual([]);
    expect((await invitationView(cloud.ctx.db, { token: shared.token, now: clock.now() })).kind).toBe(
      'withdrawn',
    );
  });

  it('replacing the controller moves the members and the invitations waiting to the new one', async () => {
    const shared = await sharedBarrier();
    const fresh = await freshController();
    const replaced = await replaceController(cloud.ctx, accounts, {
      oldDeviceId: shared.deviceId,
      customerId: shared.owner.id,
      target: { deviceId: fresh },
    });
    expect(replaced.newDeviceId).toBe(fresh);
    expect(await membersOf(shared.deviceId)).toEqual([]);
    expect(await membersOf(fresh)).toEqual([{ customer_id: shared.joined.id, may_grant: true }]);
    expect((await customerBarrier(cloud.ctx.db, shared.joined.id, fresh, 'grant')).sharedBy).toBe(
      'Anna Owner',
    );
    await acceptInvitation(cloud.ctx, { token: shared.token, customerId: shared.waiting.id });
    expect((await customerBarrier(cloud.ctx.db, shared.waiting.id, fresh, 'look')).role).toBe('looker');
  });
});
