import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { insertEntries, journalBarrier, keyHolder } from '../support/barrier-journal.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startMailServer, type TestMailServer } from '../support/mail-server.js';

/**
 * The zone a customer reads times in (docs/design.md section 10.1): proposed once by the pages' script from the
 * browser, chosen on /account, and then every time of the customer's pages, of the journal's export and of
 * the sign-in e-mail given in it, named.
 */
let database: TestDatabase;
let mail: TestMailServer;
let cloud: TestCloud;
const clock = new FakeClock(new Date('2026-11-27T14:02:00Z'));

beforeAll(async () => {
  database = await createTestDatabase();
  mail = await startMailServer();
  cloud = await startTestCloud({
    database,
    clock,
    env: { SMTP_URL: mail.url, MAIL_FROM: 'Gatelink <gate@example.com>' },
  });
});

afterAll(async () => {
  await cloud?.stop();
  await mail?.stop();
  await database?.close();
});

async function customerIn(zone: string | null, name: string): Promise<{ id: number; client: BrowserClient }> {
  const { id } = await createCustomer(cloud.ctx, { displayName: name });
  await cloud.ctx.db.updateTable('customers').set({ time_zone: zone }).where('id', '=', id).execute();
  return { id, client: await BrowserClient.signedIn(cloud, id) };
}

async function zoneOf(customerId: number): Promise<string | null> {
  const row = await cloud.ctx.db
    .selectFrom('customers')
    .select('time_zone')
    .where('id', '=', customerId)
    .executeTakeFirstOrThrow();
  return row.time_zone;
}

describe("the account's zone", () => {
  it('is proposed once from the browser by the pages, and a later proposal does not change it', async () => {
    const { id, client } = await customerIn(null, 'Paula Proposed');
    const first = await client.get('/barriers');
    expect(first.html).toContain('data-propose-zone="/account/time-zone"');
    // What app.js sends: the browser's zone, as JSON with the page's token.
    const proposed = await client.postJson('/account/time-zone', {
      time_zone: 'Europe/Berlin',
      proposed: true,
    });
    expect(proposed.status).toBe(204);
    expect(await zoneOf(id)).toBe('Europe/Berlin');
    const next = await client.get('/barriers');
    expect(next.html).not.toContain('data-propose-zone');
    const again = await client.postJson('/account/time-zone', { time_zone: 'Asia/Tokyo', proposed: true });
    expect(again.status).toBe(204);
    expect(await zoneOf(id)).toBe('Europe/Berlin');
  });

  it('refuses a proposal that is not a zone, as JSON, and keeps none', async () => {
    const { id, client } = await customerIn(null, 'Rita Refused');
    await client.get('/account');
    const refused = await client.postJson('/account/time-zone', {
      time_zone: 'Mars/Olympus',
      proposed: true,
    });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.html)).toMatchObject({ error: 'invalid_field' });
    expect(await zoneOf(id)).toBeNull();
  });

  it('is chosen on /account, and a zone not on the list gets the form back with the problem', async () => {
    const { id, client } = await customerIn('Europe/Berlin', 'Carla Chooser');
    const page = await client.get('/account');
    expect(visibleText(page.html)).toContain('Now Europe/Berlin.');
    expect(page.html).toContain('<option value="Europe/Berlin" selected>');
    const saved = await client.post('/account/time-zone', { time_zone: 'America/New_York' });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe('/account?done=time-zone-saved');
    expect(await zoneOf(id)).toBe('America/New_York');

    await client.get('/account');
    const refused = await client.post('/account/time-zone', { time_zone: 'Europe/Atlantis' });
    expect(refused.status).toBe(400);
    const text = visibleText(refused.html);
    expect(text).toContain('There is a problem');
    expect(text).toContain('Choose a time zone from the list.');
    expect(refused.html).toContain('href="#time_zone"');
    expect(await zoneOf(id)).toBe('America/New_York');
  });

  it('leaves an account without a chosen zone on UTC, and the page says so', async () => {
    const { client } = await customerIn(null, 'Uma Utc');
    expect(visibleText((await client.get('/account')).html)).toContain(
      'None chosen yet, so times are shown in UTC.',
    );
  });
});

describe('times in the reader’s zone', () => {
  const cases = [
    // 14:02 UTC is 15:02 in Berlin (CET) and 09:02 in New York (EST); 03:30 UTC is still the day before there.
    {
      zone: 'Europe/Berlin',
      granted: '27 Nov 2026, 15:02 (Europe/Berlin)',
      night: '27 Nov 2026, 04:30 (Europe/Berlin)',
    },
    {
      zone: 'America/New_York',
      granted: '27 Nov 2026, 09:02 (America/New_York)',
      night: '26 Nov 2026, 22:30 (America/New_York)',
    },
  ];

  for (const { zone, granted, night } of cases) {
    it(`shows the barrier page, the journal and its export in ${zone}, the zone named`, async () => {
      clock.set(new Date('2026-11-27T14:02:00Z'));
      const { id, client } = await customerIn(zone, `Reader in ${zone}`);
      const barrier = await journalBarrier(cloud.ctx, id, 'Home');
      const holder = await keyHolder(cloud.ctx, { customerId: id, barrier, name: 'Zone Couriers' });
      await insertEntries(cloud.ctx, barrier, [
        { holder, at: new Date('2026-11-27T03:30:00Z') },
        { holder, at: new Date('2026-11-27T14:02:00Z') },
      ]);

      const page = await client.get(`/barriers/${barrier.deviceId}`);
      expect(visibleText(page.html)).toContain(`Granted on ${granted}`);
      expect(page.html).toContain(`<time datetime="2026-11-27T14:02:00.000Z">${granted}</time>`);

      const journal = await client.get(`/barriers/${barrier.deviceId}/journal`);
      const text = visibleText(journal.html);
      expect(text).toContain(`Times are in ${zone}.`);
      expect(journal.html).toContain(`<time datetime="2026-11-27T14:02:00.000Z">${granted}</time>`);
      expect(journal.html).toContain(`<time datetime="2026-11-27T03:30:00.000Z">${night}</time>`);
      expect(text).not.toContain('UTC');

      const csv = await client.get(`/barriers/${barrier.deviceId}/journal.csv`);
      const [header, newest] = csv.html.slice(1).split('\r\n');
      expect(header!.startsWith('"Time (UTC)",')).toBe(true);
      expect(header!.endsWith(`,"Local time (${zone})"`)).toBe(true);
      const local = zone === 'Europe/Berlin' ? '2026-11-27 15:02:00' : '2026-11-27 09:02:00';
      expect(newest!.startsWith('"2026-11-27 14:02:00",')).toBe(true);
      expect(newest!.endsWith(`,"${local}"`)).toBe(true);
    });
  }

  it("gives the sign-in code's end in the account's zone, named", async () => {
    clock.set(new Date('2026-11-27T14:02:00Z'));
    const { id } = await customerIn('Europe/Berlin', 'Mara Mail');
    await cloud.ctx.db
      .updateTable('customers')
      .set({ email: 'mara@example.com', email_verified_at: clock.now() })
      .where('id', '=', id)
      .execute();
    const client = new BrowserClient(cloud.app);
    await client.get('/signin');
    const asked = await client.post('/signin/email', { email: 'mara@example.com' });
    expect(asked.status).toBe(303);
    expect(mail.lastTo('mara@example.com')!.raw).toContain(
      'It is valid for 10 minutes, until 15:12 (Europe/Berlin), and works once.',
    );
  });
});
