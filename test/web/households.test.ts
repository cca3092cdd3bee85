import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CODE_LOOKUPS } from '../../cloud/faces/customer-pages/request-routes.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import {
  companyRequest,
  companyStatus,
  insertBarrier,
  type SecretAuth,
  signedInCustomer,
  type TestBarrier,
} from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { mailOutbox } from '../support/mail-outbox.js';

/**
 * A barrier's household through the pages (docs/design.md section 9.2): the owner invites by e-mail, the invited
 * person signs in from the link and accepts, and then sees the barrier as far as their role allows; a member who
 * may only look cannot grant, withdraw or reshape; a granting member can, and the history names them; removal
 * and leaving close every page of the barrier to them.
 */
const clock = new FakeClock(Date.parse('2026-11-27T10:00:00Z'));
const outbox = mailOutbox();
const { notices, codes } = outbox;
let database: TestDatabase;
let cloud: TestCloud;
let cleaners: SecretAuth;
let serial = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({
    database,
    clock,
    mailer: outbox.mailer,
  });
  cleaners = await secretCompany(cloud, 'Demo Cleaning Ltd');
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

// A fresh minute keeps every test clear of the request lookups' limit, and a fresh day of the invitations'.
beforeEach(() => clock.advance(24 * 3600 * 1000 + CODE_LOOKUPS.windowMs));

const text = visibleText;
type Customer = Awaited<ReturnType<typeof signedInCustomer>>;

/** A signed-in customer whose account has a confirmed address, as signing in by code leaves it. */
async function withAddress(name: string): Promise<Customer & { email: string }> {
  serial += 1;
  const customer = await signedInCustomer(cloud, name);
  const email = `${name.split(' ')[0]!.toLowerCase()}.${serial}@example.com`;
  await cloud.ctx.db
    .updateTable('customers')
    .set({ email, email_verified_at: clock.now() })
    .where('id', '=', customer.id)
    .execute();
  return { ...customer, email };
}

/** The link of the newest invitation e-mailed to `email`, as the person follows it. */
function invitationLink(email: string): string {
  const message = notices.filter((notice) => notice.to === email).at(-1);
  expect(message, `no invitation to ${email}`).toBeDefined();
  const path = /\/invitations\/[A-Za-z0-9_-]{43}/.exec(message!.text)?.[0];
  expect(path, 'no link in the e-mail').toBeDefined();
  return path!;
}

/** The owner invites `email` from the barrier's page. */
async function invite(
  owner: Customer,
  barrier: TestBarrier,
  email: string,
  mayGrant: boolean,
): Promise<string> {
  await owner.client.get(`/barriers/${barrier.deviceId}`);
  const sent = await owner.client.post(`/barriers/${barrier.deviceId}/members`, {
    email,
    ...(mayGrant ? { may_grant: '1' } : {}),
  });
  expect(sent.location).toBe(`/barriers/${barrier.deviceId}?invited=1`);
  return invitationLink(email.trim().toLowerCase());
}

/** An account invited and accepted, already signed in on its own browser. */
async function joined(owner: Customer, barrier: TestBarrier, name: string, mayGrant: boolean) {
  const guest = await withAddress(name);
  const link = await invite(owner, barrier, guest.email, mayGrant);
  await guest.client.get(link);
  const accepted = await guest.client.post(`${link}/accept`);
  expect(accepted.location).toBe(`/barriers/${barrier.deviceId}?joined=1`);
  return guest;
}

/** The customer grants `company` the barrier's first object until withdrawn; returns its key_ref. */
async function granted(customer: Customer, barrier: TestBarrier): Promise<number> {
  const code = await companyRequest(cloud, cleaners);
  await customer.client.get(`/c/${code}`);
  await customer.client.post(`/c/${code}/claim`);
  await customer.client.get(`/c/${code}`);
  const answer = await customer.client.post(`/c/${code}/grant`, {
    object: String(barrier.objects[0]!.number_id),
    lifetime: 'withdrawn',
  });
  expect(answer.location).toBe(`/c/${code}?granted=1`);
  return (await companyStatus(cloud, cleaners, code)).body.key_ref as number;
}

async function keyState(keyRef: number) {
  return cloud.ctx.db
    .selectFrom('keys')
    .select(['revoked_at', 'windows', 'customer_id'])
    .where('id', '=', keyRef)
    .executeTakeFirstOrThrow();
}

/** Every page of a barrier a member reads, by path. */
function barrierPaths(barrier: TestBarrier): string[] {
  const base = `/barriers/${barrier.deviceId}`;
  return [base, `${base}/journal`, `${base}/journal.csv`, `${base}/journal.receipts.jsonl`];
}

describe("a barrier's household", () => {
  it('the invited person signs in from the e-mail, accepts, and sees the barrier, its journal and its companies', async () => {
    const anna = await withAddress('Anna Owner');
    const barrier = await insertBarrier(cloud, anna.id, { name: 'Mill Lane 4' });
    await granted(anna, barrier);
    const benEmail = `ben.${++serial}@example.com`;
    const link = await invite(anna, barrier, `  ${benEmail.toUpperCase()} `, false);
    const mail = notices.at(-1)!;
    expect(mail.to).toBe(benEmail);
    expect(mail.subject).toBe('Anna Owner invites you to share Mill Lane 4 on Gatelink');

    const owners = text((await anna.client.get(`/barriers/${barrier.deviceId}?invited=1`)).html);
    expect(owners).toContain('Invitation sent');
    expect(owners).toContain('People who share this barrier');
    expect(owners).toContain(`${benEmail} (can look only`);

    // Ben has no session yet: the link offers signing in, and comes back to itself; the address stays out of it.
    const ben = new BrowserClient(cloud.app);
    const first = await ben.get(link);
    expect(text(first.html)).toContain('Anna Owner invites you to share Mill Lane 4');
    const signIn = `/signin?next=${encodeURIComponent(link)}`;
    expect(first.html).toContain(`href="${signIn.replace(/&/g, '&amp;')}"`);
    expect(first.html).not.toContain(benEmail);
    await ben.get(signIn);
    const asked = await ben.post('/signin/email', { email: benEmail, next: link });
    expect(asked.location).toBe(`/signin/code?next=${encodeURIComponent(link)}`);
    await ben.get(asked.location!);
    const code = codes.filter((sent) => sent.to === benEmail).at(-1)!.code;
    const signedIn = await ben.post('/signin/code', { code, next: link });
    expect(signedIn.location).toBe(link);

    const page = await ben.get(link);
    expect(text(page.html)).toContain('Accept');
    const accepted = await ben.post(`${link}/accept`);
    expect(accepted.location).toBe(`/barriers/${barrier.deviceId}?joined=1`);
    // A second submit of the same form finds it done, and goes on to the barrier too.
    expect((await ben.post(`${link}/accept`)).location).toBe(`/barriers/${barrier.deviceId}?joined=1`);

    const shared = text((await ben.get(`/barriers/${barrier.deviceId}?joined=1`)).html);
    expect(shared).toContain('Welcome: Mill Lane 4 is shared with you now.');
    expect(shared).toContain('Shared by Anna Owner. You can look, not grant.');
    expect(shared).toContain('Demo Cleaning Ltd');
    expect(shared).not.toContain('Withdraw access');
    expect(shared).not.toContain('Rename');
    expect(shared).toContain('Leave this barrier');
    const journal = await ben.get(`/barriers/${barrier.deviceId}/journal`);
    expect(journal.status).toBe(200);
    expect(text(journal.html)).toContain('Mill Lane 4');
    expect((await ben.get(`/barriers/${barrier.deviceId}/journal.csv`)).status).toBe(200);
    const list = text((await ben.get('/barriers')).html);
    expect(list).toContain('Mill Lane 4');
    expect(list).toContain('Shared by Anna Owner. You can look, not grant.');

    const members = text((await anna.client.get(`/barriers/${barrier.deviceId}`)).html);
    expect(members).toContain(benEmail);
    expect(members).toContain('Can look only');
    expect(text((await ben.get(link)).html)).toContain('accepted already');
  });

  it('a member who may only look is not offered the barrier to grant, and forged forms write nothing', async () => {
    const anna = await withAddress('Anna Owner');
    const barrier = await insertBarrier(cloud, anna.id, { name: 'Mill Lane 4' });
    const keyRef = await granted(anna, barrier);
    const carl = await joined(anna, barrier, 'Carl Looker', false);

    const code = await companyRequest(cloud, cleaners);
    await carl.client.get(`/c/${code}`);
    await carl.client.post(`/c/${code}/claim`);
    const consent = await carl.client.get(`/c/${code}`);
    expect(text(consent.html)).not.toContain('Mill Lane 4');
    expect(consent.html).not.toContain(`value="${barrier.objects[0]!.number_id}"`);
    const forged = await carl.client.post(`/c/${code}/grant`, {
      object: String(barrier.objects[0]!.number_id),
      lifetime: 'withdrawn',
    });
    expect(forged.status).toBe(400);
    expect((await companyStatus(cloud, cleaners, code)).body.state).toBe('claimed');

    await carl.client.get(`/barriers/${barrier.deviceId}`);
    const withdraw = await carl.client.post(`/barriers/${barrier.deviceId}/keys/${keyRef}/withdraw`);
    expect(withdraw.status).toBe(404);
    expect((await carl.client.get(`/barriers/${barrier.deviceId}/keys/${keyRef}/shape`)).status).toBe(404);
    const reshape = await carl.client.post(`/barriers/${barrier.deviceId}/keys/${keyRef}/shape`, {
      hours: 'windows',
      w0_days: 'mon',
      w0_from: '08:00',
      w0_to: '12:00',
      lifetime: 'withdrawn',
    });
    expect(reshape.status).toBe(404);
    expect(await keyState(keyRef)).toMatchObject({ revoked_at: null, windows: null });
    expect((await companyStatus(cloud, cleaners, code)).body.state).toBe('claimed');
  });

  it('a member who may grant grants and withdraws, and the history names them', async () => {
    const anna = await withAddress('Anna Owner');
    const barrier = await insertBarrier(cloud, anna.id, { name: 'Mill Lane 4' });
    const annasKey = await granted(anna, barrier);
    const dora = await joined(anna, barrier, 'Dora Granter', true);

    const dorasKey = await granted(dora, barrier);
    // The household's key is kept under the owner, whose page lists it.
    expect((await keyState(dorasKey)).customer_id).toBe(anna.id);
    await dora.client.get(`/barriers/${barrier.deviceId}`);
    const withdrawn = await dora.client.post(`/barriers/${barrier.deviceId}/keys/${annasKey}/withdraw`);
    expect(withdrawn.location).toBe(`/barriers/${barrier.deviceId}?withdrawn=${annasKey}`);
    expect((await keyState(annasKey)).revoked_at).not.toBeNull();

    const page = text((await anna.client.get(`/barriers/${barrier.deviceId}`)).html);
    expect(page).toContain("Dora Granter withdrew Demo Cleaning Ltd's access");
    expect(page).toContain('Dora Granter gave Demo Cleaning Ltd access');
    expect(page).toContain('Anna Owner gave Demo Cleaning Ltd access');
    // Not the owner: the barrier's settings and its household stay the owner's.
    const hers = text((await dora.client.get(`/barriers/${barrier.deviceId}`)).html);
    expect(hers).toContain('Withdraw access');
    expect(hers).not.toContain('People who share this barrier');
    await dora.client.post(`/barriers/${barrier.deviceId}/name`, { name: 'Mine now' }).then((answer) => {
      expect(answer.status).toBe(404);
    });
    expect((await dora.client.post(`/barriers/${barrier.deviceId}/remove`)).status).toBe(404);
    expect(
      (await dora.client.post(`/barriers/${barrier.deviceId}/members`, { email: 'friend@example.com' }))
        .status,
    ).toBe(404);
  });

  it('a removed member, and one who left, get 404 on every page of the barrier', async () => {
    const anna = await withAddress('Anna Owner');
    const barrier = await insertBarrier(cloud, anna.id, { name: 'Mill Lane 4' });
    const eve = await joined(anna, barrier, 'Eve Removed', true);
    const finn = await joined(anna, barrier, 'Finn Leaver', false);
    for (const path of barrierPaths(barrier)) expect((await eve.client.get(path)).status, path).toBe(200);

    await anna.client.get(`/barriers/${barrier.deviceId}`);
    const removed = await anna.client.post(`/barriers/${barrier.deviceId}/members/${eve.id}/remove`);
    expect(removed.location).toBe(`/barriers/${barrier.deviceId}?member_removed=1`);
    await finn.client.get(`/barriers/${barrier.deviceId}`);
    const left = await finn.client.post(`/barriers/${barrier.deviceId}/leave`);
    expect(left.location).toBe('/barriers?left=1');
    expect(text((await finn.client.get('/barriers?left=1')).html)).toContain('You left the barrier');

    for (const gone of [eve, finn]) {
      for (const path of barrierPaths(barrier)) expect((await gone.client.get(path)).status, path).toBe(404);
      expect((await gone.client.get('/barriers')).html).not.toContain(`href="/barriers/${barrier.deviceId}"`);
    }
    expect(text((await anna.client.get(`/barriers/${barrier.deviceId}`)).html)).toContain(
      'Nobody else shares Mill Lane 4',
    );
  });

  it('keeps the invitation form with the problem: own address, a limit', async () => {
    const anna = await withAddress('Anna Owner');
    const barrier = await insertBarrier(cloud, anna.id, { name: 'Mill Lane 4' });
    await anna.client.get(`/barriers/${barrier.deviceId}`);
    const own = await anna.client.post(`/barriers/${barrier.deviceId}/members`, {
      email: anna.email,
      may_grant: '1',
    });
    expect(own.status).toBe(400);
    expect(text(own.html)).toContain('That is your own address');
    expect(own.html).toContain(`value="${anna.email}"`);
    for (let i = 0; i < 10; i += 1) await invite(anna, barrier, `guest${i}.${serial}@example.com`, false);
    const full = await anna.client.post(`/barriers/${barrier.deviceId}/members`, {
      email: 'one.more@example.com',
    });
    expect(full.status).toBe(409);
    expect(text(full.html)).toContain('at most 10 people');
    expect(full.html).toContain('value="one.more@example.com"');
  });

  it('[attack:web.member-foreign-household] a member of one household gets 404 from another household, and changes nothing', async () => {
    const anna = await withAddress('Anna Owner');
    const mine = await insertBarrier(cloud, anna.id, { name: 'Mill Lane 4' });
    const mallory = await joined(anna, mine, 'Mallory Member', true);
    const gus = await withAddress('Gus Neighbour');
    const theirs = await insertBarrier(cloud, gus.id, { name: 'Next door' });
    const keyRef = await granted(gus, theirs);
    const hal = await joined(gus, theirs, 'Hal Theirs', false);
    const base = `/barriers/${theirs.deviceId}`;

    for (const path of [...barrierPaths(theirs), `${base}/keys/${keyRef}/shape`]) {
      expect((await mallory.client.get(path)).status, path).toBe(404);
    }
    await mallory.client.get(`/barriers/${mine.deviceId}`);
    const posts: [string, Record<string, string>][] = [
      [`${base}/keys/${keyRef}/withdraw`, {}],
      [`${base}/keys/${keyRef}/shape`, { hours: 'any', lifetime: 'withdrawn' }],
      [`${base}/members`, { email: 'friend@example.com', may_grant: '1' }],
      [`${base}/members/${hal.id}/remove`, {}],
      [`${base}/members/${hal.id}/may-grant`, { may_grant: '1' }],
      [`${base}/name`, { name: 'Taken' }],
    ];
    for (const [path, fields] of posts)
      expect((await mallory.client.post(path, fields)).status, path).toBe(404);

    expect(await keyState(keyRef)).toMatchObject({ revoked_at: null, windows: null });
    const household = await cloud.ctx.db
      .selectFrom('barrier_members')
      .select(['customer_id', 'may_grant'])
      .where('device_id', '=', theirs.deviceId)
      .execute();
    expect(household).toEqual([{ customer_id: hal.id, may_grant: false }]);
    const invitations = await cloud.ctx.db
      .selectFrom('barrier_invitations')
      .select('email')
      .where('device_id', '=', theirs.deviceId)
      .execute();
    expect(invitations).toEqual([{ email: hal.email }]);
    expect(text((await gus.client.get(base)).html)).toContain('Next door');
  });

  it('[attack:web.invitation-other-account] another account following the link is refused, and nothing is written', async () => {
    const anna = await withAddress('Anna Owner');
    const barrier = await insertBarrier(cloud, anna.id, { name: 'Mill Lane 4' });
    const ivy = `ivy.${++serial}@example.com`;
    const link = await invite(anna, barrier, ivy, true);
    const mallory = await withAddress('Mallory Forwarded');

    const page = await mallory.client.get(link);
    expect(text(page.html)).toContain('This invitation is for another e-mail address, i***@example.com');
    expect(page.html).not.toContain(ivy);
    expect(page.html).not.toContain(`${link}/accept`);
    const accepted = await mallory.client.post(`${link}/accept`);
    expect(accepted.status).toBe(403);
    expect(text(accepted.html)).toContain('i***@example.com');
    expect((await mallory.client.get(`/barriers/${barrier.deviceId}`)).status).toBe(404);

    const stored = await cloud.ctx.db
      .selectFrom('barrier_invitations')
      .select(['accepted_at', 'accepted_by'])
      .where('device_id', '=', barrier.deviceId)
      .execute();
    expect(stored).toEqual([{ accepted_at: null, accepted_by: null }]);
    const members = await cloud.ctx.db
      .selectFrom('barrier_members')
      .select('customer_id')
      .where('device_id', '=', barrier.deviceId)
      .execute();
    expect(members).toEqual([]);
    expect((await mallory.client.get('/invitations/unknown')).status).toBe(404);
  });
});
