import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CODE_LOOKUPS } from '../../cloud/faces/customer-pages/request-routes.js';
import { sweepExpired } from '../../cloud/rules/access-keys/expiry.js';
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

/**
 * Consent (docs/design.md section 10.3) as the customer gives it and the company sees it: Continue claims,
 * Grant issues a key with the objects and lifetime chosen, Decline ends the request and tells the company, a
 * request past that point offers nothing, and the customer's withdrawal stops the company's next `open` at once.
 */
const DAY = 24 * 3600 * 1000;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;
let company: SecretAuth;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock });
  company = await secretCompany(cloud, 'Tidy Cleaners');
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

// Each test looks codes up from one address; a fresh minute keeps it clear of the lookup limit.
beforeEach(() => clock.advance(CODE_LOOKUPS.windowMs));

const text = visibleText;
const day = (offsetDays: number) =>
  new Date(clock.now().getTime() + offsetDays * DAY).toISOString().slice(0, 10);

/** A customer with one barrier of three objects, on a request they claimed with Continue. */
async function claimedByNewCustomer(name: string) {
  const customer = await signedInCustomer(cloud, name);
  const barrier = await insertBarrier(cloud, customer.id, { name: `${name} gate` });
  const code = await companyRequest(cloud, company);
  await customer.client.get(`/c/${code}`);
  const claimed = await customer.client.post(`/c/${code}/claim`);
  expect(claimed.status).toBe(303);
  await customer.client.get(`/c/${code}`);
  return { ...customer, barrier, code };
}

function grant(client: BrowserClient, code: string, fields: Record<string, string | string[]>) {
  return client.post(`/c/${code}/grant`, fields);
}

const ids = (barrier: TestBarrier, ...indexes: number[]) =>
  indexes.map((i) => String(barrier.objects[i]!.number_id));

async function openAs(auth: SecretAuth, keyRef: number, numberId: number) {
  return cloud.call('open', { ...auth, key_ref: keyRef, number_id: numberId, actor: 'Cleaner Cleo' });
}

function decline(client: BrowserClient, code: string, fields: Record<string, string> = {}) {
  return client.post(`/c/${code}/decline`, fields);
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, as the company API writes times. */
const stamp = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');

/** The events the company was sent about one request, oldest first. */
async function eventsOf(code: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const rows = await cloud.ctx.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('company_id', '=', company.org_id)
    .orderBy('seq')
    .execute();
  return rows
    .map((row) => ({
      type: row.type,
      data: (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as Record<string, unknown>,
    }))
    .filter((event) => event.data.code === code);
}

describe('granting', () => {
  it('two of three objects until a day: the company sees issued, its key_ref, those two numbers and the end', async () => {
    const { client, barrier, code } = await claimedByNewCustomer('Grace');
    const form = await client.get(`/c/${code}`);
    expect(text(form.html)).toContain('Give Tidy Cleaners access');
    for (const object of barrier.objects) expect(text(form.html)).toContain(object.label);

    const lastDay = day(3);
    const granted = await grant(client, code, {
      object: ids(barrier, 0, 2),
      lifetime: 'date',
      until: lastDay,
    });
    expect(granted.status, text(granted.html)).toBe(303);
    expect(granted.location).toBe(`/c/${code}?granted=1`);

    const status = await companyStatus(cloud, company, code);
    expect(status.body.state).toBe('issued');
    expect(status.body.key_ref).toBeTypeOf('number');
    expect(status.body.numbers).toEqual([barrier.objects[0], barrier.objects[2]]);
    // The key lasts the whole of the last day where the barrier is: in UTC, as it has no other zone yet.
    expect(status.body.key_expires_at).toBe(`${day(4)} 00:00:00`);

    const confirmation = text((await client.get(granted.location!)).html);
    expect(confirmation).toContain('Access granted');
    expect(confirmation).toContain('Tidy Cleaners');
    expect(confirmation).toContain('Grace gate');
    expect(confirmation).toContain('Main gate, Garage');
    expect(confirmation).not.toContain('Side door');
    const [y, m, d] = lastDay.split('-').map(Number) as [number, number, number];
    const shown = new Date(Date.UTC(y, m - 1, d)).toLocaleDateString('en-GB', {
      timeZone: 'UTC',
      day: 'numeric',
      month: 'short',
      year: 'numeric',
    });
    expect(confirmation).toContain(`Until the end of ${shown} (UTC)`);
    expect((await client.get(granted.location!)).html).toContain(`href="/barriers/${barrier.deviceId}"`);
  });

  it('until a date on a barrier in Berlin: the key ends at midnight there, and the page says so', async () => {
    const { client, barrier, code } = await claimedByNewCustomer('Berta');
    await cloud.ctx.db
      .updateTable('devices')
      .set({ time_zone: 'Europe/Berlin' })
      .where('id', '=', barrier.deviceId)
      .execute();
    const form = text((await client.get(`/c/${code}`)).html);
    expect(form).toContain(
      "Access ends at midnight at the end of that day, the barrier's time (Europe/Berlin).",
    );
    // Midsummer and midwinter: Berlin is UTC+2 in summer and UTC+1 in winter.
    const summer = `${new Date(clock.now()).getUTCFullYear() + 1}-07-15`;
    await grant(client, code, { object: ids(barrier, 0), lifetime: 'date', until: summer });
    expect((await companyStatus(cloud, company, code)).body.key_expires_at).toBe(`${summer} 22:00:00`);
    const confirmation = text((await client.get(`/c/${code}`)).html);
    expect(confirmation).toContain(`Until the end of 15 Jul ${summer.slice(0, 4)} (Europe/Berlin)`);
  });

  it('until withdrawn: no key_expires_at, and the company may open those objects', async () => {
    const { client, barrier, code } = await claimedByNewCustomer('Ulla');
    await grant(client, code, { object: ids(barrier, 1), lifetime: 'withdrawn' });
    const status = await companyStatus(cloud, company, code);
    expect(status.body.state).toBe('issued');
    expect(status.body).not.toHaveProperty('key_expires_at');
    expect(status.body.numbers).toEqual([barrier.objects[1]]);
    const page = text((await client.get(`/c/${code}`)).html);
    expect(page).toContain('Until you withdraw it');
  });

  it('says what is wrong and keeps the choices: nothing ticked, no day, a past day, a day that does not exist', async () => {
    const { client, barrier, code } = await claimedByNewCustomer('Erik');
    const cases: [Record<string, string | string[]>, string][] = [
      [{ lifetime: 'withdrawn' }, 'Tick at least one thing Tidy Cleaners may open.'],
      [{ object: ids(barrier, 0), lifetime: 'date', until: '' }, 'Choose the last day of access.'],
      [{ object: ids(barrier, 0), lifetime: 'date', until: day(-1) }, 'The last day must be today or later.'],
      [{ object: ids(barrier, 0), lifetime: 'date', until: '2027-02-30' }, 'That day does not exist'],
      [{ object: ids(barrier, 0), lifetime: 'forever' }, 'Choose how long access lasts.'],
      [{ object: ['abc'], lifetime: 'withdrawn' }, 'Tick what they may open from the list.'],
    ];
    for (const [fields, message] of cases) {
      const answer = await grant(client, code, fields);
      expect(answer.status, message).toBe(400);
      expect(text(answer.html)).toContain('There is a problem');
      expect(text(answer.html)).toContain(message);
    }
    const kept = await grant(client, code, { object: ids(barrier, 1), lifetime: 'date', until: day(-1) });
    expect(kept.html).toMatch(new RegExp(`value="${barrier.objects[1]!.number_id}"[^>]*checked`));
    expect(kept.html).toContain(`value="${day(-1)}"`);
    expect((await companyStatus(cloud, company, code)).body.state).toBe('claimed');
  });

  it('accepts today as the last day: the key ends at the coming midnight, UTC', async () => {
    const { client, barrier, code } = await claimedByNewCustomer('Tove');
    expect(
      (await grant(client, code, { object: ids(barrier, 0), lifetime: 'date', until: day(0) })).status,
    ).toBe(303);
    expect((await companyStatus(cloud, company, code)).body.key_expires_at).toBe(`${day(1)} 00:00:00`);
  });
});

describe('what is not the customer’s to grant', () => {
  it("refuses another customer's object or barrier, and objects of two barriers, leaving the request claimed", async () => {
    const { client, id, barrier, code } = await claimedByNewCustomer('Mona');
    const second = await insertBarrier(cloud, id, { name: 'Mona back gate', labels: ['Back gate'] });
    const stranger = await signedInCustomer(cloud, 'Stranger');
    const theirs = await insertBarrier(cloud, stranger.id, { name: 'Stranger gate' });

    const foreign = await grant(client, code, { object: ids(theirs, 0), lifetime: 'withdrawn' });
    expect(foreign.status).toBe(400);
    expect(text(foreign.html)).toContain('Tick only what is on your own barriers.');
    expect(foreign.html).not.toContain('Stranger gate');

    const mixed = await grant(client, code, {
      object: [...ids(barrier, 0), ...ids(theirs, 1)],
      lifetime: 'withdrawn',
    });
    expect(mixed.status).toBe(400);

    const twoBarriers = await grant(client, code, {
      object: [...ids(barrier, 0), ...ids(second, 0)],
      lifetime: 'withdrawn',
    });
    expect(twoBarriers.status).toBe(400);
    expect(text(twoBarriers.html)).toContain('Access covers one barrier');

    expect((await companyStatus(cloud, company, code)).body.state).toBe('claimed');
    // The second barrier alone is fine.
    expect((await grant(client, code, { object: ids(second, 0), lifetime: 'withdrawn' })).status).toBe(303);
    expect((await companyStatus(cloud, company, code)).body.numbers).toEqual([second.objects[0]]);
  });

  it("refuses to grant on another customer's claimed request", async () => {
    const { code } = await claimedByNewCustomer('Holder');
    const other = await signedInCustomer(cloud, 'Grabber');
    const theirs = await insertBarrier(cloud, other.id);
    await other.client.get(`/c/${code}`);
    const answer = await grant(other.client, code, { object: ids(theirs, 0), lifetime: 'withdrawn' });
    expect(answer.status).toBe(303);
    expect(answer.location).toBe(`/c/${code}`);
    expect((await companyStatus(cloud, company, code)).body.state).toBe('claimed');
  });
});

describe('declining', () => {
  it('a Decline button beside Grant, in a form of its own with the page token, saying what declining tells', async () => {
    const { client, code } = await claimedByNewCustomer('Dora');
    const form = await client.get(`/c/${code}`);
    expect(form.html).toMatch(
      /<button type="submit" form="decline-form" class="secondary">Decline<\/button>/,
    );
    const declineForm = /<form id="decline-form"[^>]*>[\s\S]*?<\/form>/.exec(form.html)?.[0] ?? '';
    expect(declineForm).toContain(`action="/c/${code}/decline"`);
    expect(declineForm).toContain('method="post"');
    expect(declineForm).toContain('data-confirm="Decline the request from Tidy Cleaners?"');
    expect(declineForm).toContain(`name="_csrf" value="${client.csrfToken}"`);
    expect(form.html).not.toContain('>Decline</a>');
    const words = text(form.html);
    expect(words).toContain(
      'Declining tells Tidy Cleaners only that you said no, nothing about you or your barriers.',
    );
    expect(words).not.toContain('still open');
  });

  it('ends the request at once: the page says so, status says declined with declined_at, and the company gets the event', async () => {
    const { client, code } = await claimedByNewCustomer('Dana');
    clock.advance(60_000);
    const now = clock.now();
    const declinedAt = stamp(now);
    const answer = await decline(client, code);
    expect(answer.status).toBe(303);
    expect(answer.location).toBe(`/c/${code}`);

    const page = await client.get(`/c/${code}`);
    const words = text(page.html);
    expect(words).toContain('Declined');
    expect(words).toContain('You declined this request on');
    expect(page.html).toContain(`You declined this request on <time datetime="${now.toISOString()}">`);
    expect(page.html).not.toContain('Grant access');
    expect(page.html).not.toContain('decline-form');

    const status = await companyStatus(cloud, company, code);
    expect(status.body).toMatchObject({ state: 'declined', declined_at: declinedAt });
    expect(status.body).not.toHaveProperty('key_ref');
    const events = await eventsOf(code);
    expect(events.map((event) => event.type)).toEqual(['request.claimed', 'request.declined']);
    expect(events[1]!.data).toEqual({ code, ref: null, state: 'declined', declined_at: declinedAt });
  });

  it('is final: it cannot be claimed or granted afterwards, does not expire, and the sweep leaves it alone', async () => {
    const { client, barrier, code } = await claimedByNewCustomer('Final');
    await decline(client, code);
    const declinedAt = (await companyStatus(cloud, company, code)).body.declined_at;

    const granted = await grant(client, code, { object: ids(barrier, 0), lifetime: 'withdrawn' });
    expect(granted.status).toBe(303);
    expect(granted.location).toBe(`/c/${code}`);
    expect((await client.post(`/c/${code}/claim`)).status).toBe(303);
    const other = await signedInCustomer(cloud, 'Latecomer');
    await other.client.get(`/c/${code}`);
    expect((await other.client.post(`/c/${code}/claim`)).status).toBe(303);
    expect((await decline(client, code)).status).toBe(303);

    clock.advance(2 * DAY);
    await sweepExpired(cloud.ctx);
    expect((await companyStatus(cloud, company, code)).body).toMatchObject({
      state: 'declined',
      declined_at: declinedAt,
    });
    expect((await eventsOf(code)).map((event) => event.type)).toEqual([
      'request.claimed',
      'request.declined',
    ]);
    const later = text((await other.client.get(`/c/${code}`)).html);
    expect(later).toContain('This request was declined');
    expect(later).toContain('ask them for a new code');
    expect(later).not.toContain('You declined');
    const signedOut = text((await new BrowserClient(cloud.app).get(`/c/${code}`)).html);
    expect(signedOut).toContain('Declined');
    expect(signedOut).toContain('This request was declined');
    expect(signedOut).not.toContain('You declined');
  });

  it('with no barrier yet, Decline is offered beside "Add a barrier" and works the same', async () => {
    const customer = await signedInCustomer(cloud, 'Barrierless');
    const code = await companyRequest(cloud, company);
    await customer.client.get(`/c/${code}`);
    await customer.client.post(`/c/${code}/claim`);
    const page = await customer.client.get(`/c/${code}`);
    expect(text(page.html)).toContain('Add your barrier first');
    expect(page.html).toContain('form="decline-form"');
    expect(page.html).toContain(`action="/c/${code}/decline"`);
    expect(page.html).not.toContain('>Decline</a>');
    expect((await decline(customer.client, code)).status).toBe(303);
    expect((await companyStatus(cloud, company, code)).body.state).toBe('declined');
    expect(text((await customer.client.get(`/c/${code}`)).html)).toContain('You declined this request');
  });
});

describe('[attack:web.decline-foreign-request] declining what is not the customer’s to decline', () => {
  it("another account's decline of a claimed request is sent back to the page, and nothing changes", async () => {
    const { code } = await claimedByNewCustomer('Holda');
    const other = await signedInCustomer(cloud, 'Meddler');
    const seen = await other.client.get(`/c/${code}`);
    expect(text(seen.html)).toContain('Taken by another account');
    expect(seen.html).not.toContain('decline-form');
    const answer = await decline(other.client, code);
    expect(answer.status).toBe(303);
    expect(answer.location).toBe(`/c/${code}`);
    expect((await companyStatus(cloud, company, code)).body.state).toBe('claimed');
    expect((await eventsOf(code)).map((event) => event.type)).toEqual(['request.claimed']);
  });

  it('without the page token, or once the session ended, is refused and nothing changes', async () => {
    const { client, code } = await claimedByNewCustomer('Tokenless');
    const forged = await decline(client, code, { _csrf: 'not-the-token' });
    expect(forged.status).toBe(403);
    await client.post('/signout');
    const signedOut = await decline(client, code);
    expect(signedOut.status).toBe(401);
    expect(text(signedOut.html)).toContain('Sign in to continue.');
    expect((await companyStatus(cloud, company, code)).body.state).toBe('claimed');
    expect((await eventsOf(code)).map((event) => event.type)).toEqual(['request.claimed']);
  });

  it('a new, granted or expired request is left as it was, the holder’s own included', async () => {
    const fresh = await companyRequest(cloud, company);
    const someone = await signedInCustomer(cloud, 'Early');
    await someone.client.get(`/c/${fresh}`);
    expect((await decline(someone.client, fresh)).location).toBe(`/c/${fresh}`);
    expect((await companyStatus(cloud, company, fresh)).body.state).toBe('new');

    const granted = await claimedByNewCustomer('Granter');
    await grant(granted.client, granted.code, { object: ids(granted.barrier, 0), lifetime: 'withdrawn' });
    expect((await decline(granted.client, granted.code)).location).toBe(`/c/${granted.code}`);
    const issued = await companyStatus(cloud, company, granted.code);
    expect(issued.body.state).toBe('issued');
    expect(issued.body).not.toHaveProperty('declined_at');

    const lapsing = await claimedByNewCustomer('Lapser');
    clock.advance(DAY);
    expect((await decline(lapsing.client, lapsing.code)).location).toBe(`/c/${lapsing.code}`);
    expect((await companyStatus(cloud, company, lapsing.code)).body.state).toBe('expired');
    await sweepExpired(cloud.ctx);
    expect((await eventsOf(lapsing.code)).map((event) => event.type)).toEqual([
      'request.claimed',
      'request.expired',
    ]);
  });
});

describe('requests past consent', () => {
  it('an issued, withdrawn or expired request offers nothing to grant, and a stale form grants nothing', async () => {
    const issued = await claimedByNewCustomer('Ivo');
    await grant(issued.client, issued.code, { object: ids(issued.barrier, 0), lifetime: 'withdrawn' });
    const keyRef = (await companyStatus(cloud, company, issued.code)).body.key_ref;
    const again = await grant(issued.client, issued.code, {
      object: ids(issued.barrier, 1),
      lifetime: 'withdrawn',
    });
    expect(again.status).toBe(303);
    const after = await companyStatus(cloud, company, issued.code);
    expect(after.body.key_ref).toBe(keyRef);
    expect(after.body.numbers).toEqual([issued.barrier.objects[0]]);
    expect((await issued.client.get(`/c/${issued.code}`)).html).not.toContain('Grant access');

    await issued.client.get(`/barriers/${issued.barrier.deviceId}`);
    await issued.client.post(`/barriers/${issued.barrier.deviceId}/keys/${keyRef}/withdraw`);
    const withdrawn = await issued.client.get(`/c/${issued.code}`);
    expect(text(withdrawn.html)).toContain('Withdrawn');
    expect(withdrawn.html).not.toContain('Grant access');

    const lapsing = await claimedByNewCustomer('Lapse');
    clock.advance(DAY);
    const expired = await lapsing.client.get(`/c/${lapsing.code}`);
    expect(text(expired.html)).toContain('Expired');
    expect(expired.html).not.toContain('Grant access');
    await grant(lapsing.client, lapsing.code, { object: ids(lapsing.barrier, 0), lifetime: 'withdrawn' });
    expect((await companyStatus(cloud, company, lapsing.code)).body.state).toBe('expired');
  });

  it('with no barrier yet, explains and leads to adding one, then back to the request', async () => {
    const customer = await signedInCustomer(cloud, 'Newbie');
    const code = await companyRequest(cloud, company);
    await customer.client.get(`/c/${code}`);
    await customer.client.post(`/c/${code}/claim`);
    const page = await customer.client.get(`/c/${code}`);
    expect(text(page.html)).toContain('Add your barrier first');
    expect(page.html).toContain(`href="/barriers?next=/c/${code}"`);

    // A controller waiting to be paired, as provisioning leaves it.
    await cloud.ctx.db
      .insertInto('devices')
      .values({
        id: 'DNEWB1E0000',
        label: 'Installer gate',
        pairing_code: 'NEWB1EPC',
        pairing_expires_at: new Date(clock.now().getTime() + DAY),
      })
      .execute();
    await cloud.ctx.db
      .insertInto('device_objects')
      .values({ device_id: 'DNEWB1E0000', local_id: 'gate', label: 'Drive gate', kind: 'relay' })
      .execute();
    const list = await customer.client.get(`/barriers?next=/c/${code}`);
    expect(list.html).toContain(`name="next" value="/c/${code}"`);
    const paired = await customer.client.post('/barriers', {
      code: 'newb-lepc',
      name: 'Home',
      next: `/c/${code}`,
    });
    expect(paired.status, text(paired.html)).toBe(303);
    expect(paired.location).toBe(`/c/${code}`);
    expect(text((await customer.client.get(`/c/${code}`)).html)).toContain('Drive gate');
  });
});

describe('withdrawing', () => {
  it('takes effect at once: status says revoked, and the next open is 403 revoked without asking the controller', async () => {
    const { client, barrier, code } = await claimedByNewCustomer('Wanda');
    await grant(client, code, { object: ids(barrier, 0, 1), lifetime: 'withdrawn' });
    const keyRef = (await companyStatus(cloud, company, code)).body.key_ref as number;
    // Before: the key is good; the barrier's controller is simply not connected here.
    expect((await openAs(company, keyRef, barrier.objects[0]!.number_id)).body.error).toBe('device_offline');

    const page = await client.get(`/barriers/${barrier.deviceId}`);
    expect(page.html).toContain('data-confirm="Withdraw access for Tidy Cleaners?"');
    const withdrawn = await client.post(`/barriers/${barrier.deviceId}/keys/${keyRef}/withdraw`);
    expect(withdrawn.status).toBe(303);
    expect(text((await client.get(withdrawn.location!)).html)).toContain(
      'Access withdrawn: Tidy Cleaners can no longer open Wanda gate.',
    );

    const status = await companyStatus(cloud, company, code);
    expect(status.body.state).toBe('revoked');
    expect(status.body.revoked_at).toBeTypeOf('string');
    const open = await openAs(company, keyRef, barrier.objects[0]!.number_id);
    expect({ status: open.status, error: open.body.error }).toEqual({ status: 403, error: 'revoked' });
    // Gone from the companies with access; the barrier's history still says who withdrew it.
    const after = (await client.get(`/barriers/${barrier.deviceId}`)).html;
    const access = /<section[^>]*aria-labelledby="access-title"[\s\S]*?<\/section>/.exec(after)?.[0] ?? '';
    expect(text(access)).not.toContain('Tidy Cleaners');
    expect(text(after)).toContain("Wanda withdrew Tidy Cleaners's access");
  });

  it('a dated key past its day is shown as ended, and open says expired until it is withdrawn', async () => {
    const { client, barrier, code } = await claimedByNewCustomer('Edda');
    await grant(client, code, { object: ids(barrier, 0), lifetime: 'date', until: day(0) });
    const keyRef = (await companyStatus(cloud, company, code)).body.key_ref as number;
    clock.advance(DAY);
    const open = await openAs(company, keyRef, barrier.objects[0]!.number_id);
    expect({ status: open.status, error: open.body.error }).toEqual({ status: 403, error: 'expired' });
    const page = text((await client.get(`/barriers/${barrier.deviceId}`)).html);
    expect(page).toContain('Tidy Cleaners');
    expect(page).toContain('Ended');
    expect(page).not.toContain('Has access');
    expect(text((await client.get('/barriers')).html)).toContain('No company has access');
  });
});
