import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { createRequest } from '../../cloud/rules/requests/requests.js';
import { EVENT_KINDS } from '../../shared/company-api/events.js';
import { grantKey, insertEntries, journalBarrier, type KeyHolder } from '../support/barrier-journal.js';
import { visibleText } from '../support/browser-client.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { approveDirectly, type CompanyOwner, companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { enqueuePings, outbox } from '../support/event-company.js';

/**
 * A company's callback endpoints, its requests and its openings in its area (docs/design.md sections 6.2 and
 * 11.4): the address rules when saved, the lists with their filters and pages, and nothing of another company
 * shown.
 */
let database: TestDatabase;
let cloud: TestCloud;
/** Host names as this suite's DNS answers them; nothing leaves the machine. */
const DNS: Record<string, string[]> = {
  'hooks.parcels.example': ['93.184.216.34'],
  'sneaky.example': ['93.184.216.34', '127.0.0.1'],
  'intranet.example': ['10.1.2.3'],
  'six.example': ['fd00::1'],
};

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({
    database,
    resolveHost: async (host) =>
      (DNS[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
  });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

/** The newest waiting event the add form says it would drop up to. */
function heldUpTo(html: string): string | undefined {
  return /name="held_up_to" value="(\d+)"/.exec(html)?.[1];
}

/** The company's endpoints' addresses, oldest first. */
async function storedEndpoints(companyId: number): Promise<string[]> {
  const rows = await cloud.ctx.db
    .selectFrom('endpoints')
    .select('url')
    .where('company_id', '=', companyId)
    .orderBy('id')
    .execute();
  return rows.map((row) => row.url);
}

/** An endpoint's page, as the list links it: the n-th, oldest first. */
function endpointLink(html: string, n = 0): string {
  const links = [...html.matchAll(/href="(\/company\/\d+\/callback\/\d+)"/g)].map((match) => match[1]!);
  expect(links.length).toBeGreaterThan(n);
  return links[n]!;
}

describe('the callback endpoints', () => {
  let owner: CompanyOwner;
  beforeAll(async () => {
    owner = await companyOwner(cloud, { name: 'Hook Couriers' });
  });

  it('adds an https address whose host resolves only to public addresses, lists it, and removes it', async () => {
    const list = `/company/${owner.companyId}/callback`;
    const page = visibleText((await owner.client.get(list)).html);
    expect(page).toContain('Gatelink sends events to each endpoint');
    expect(page).toContain('No endpoint yet Nothing is sent.');
    const saved = await owner.client.post(list, {
      callback_url: 'https://hooks.parcels.example/gatelink?source=1',
    });
    expect(saved.status).toBe(200);
    expect(visibleText(saved.html)).toContain('Endpoint added.');
    expect(visibleText(saved.html)).toContain('https://hooks.parcels.example/gatelink?source=1 Working');
    expect(await storedEndpoints(owner.companyId)).toEqual([
      'https://hooks.parcels.example/gatelink?source=1',
    ]);
    const listed = await owner.client.get(list);
    expect(visibleText(listed.html)).toContain(
      '1 endpoint https://hooks.parcels.example/gatelink?source=1 Working Every kind · Nothing waiting Manage',
    );
    const endpoint = endpointLink(listed.html);
    expect(listed.html).toContain(`aria-label="Manage https://hooks.parcels.example/gatelink?source=1"`);
    const removed = await owner.client.post(`${endpoint}/remove`);
    expect(removed.status).toBe(200);
    expect(visibleText(removed.html)).toContain(
      'Endpoint removed: events are no longer sent to https://hooks.parcels.example/gatelink?source=1.',
    );
    expect(visibleText(removed.html)).toContain('No endpoint yet');
    expect(await storedEndpoints(owner.companyId)).toEqual([]);
    // Its page is gone with it, and its forms with it.
    expect((await owner.client.get(endpoint)).status).toBe(404);
    expect((await owner.client.post(`${endpoint}/remove`)).status).toBe(404);
  });

  it("lists every kind of event the cloud sends on an endpoint's page, the test event among them, and moves it", async () => {
    const list = `/company/${owner.companyId}/callback`;
    await owner.client.get(list);
    const added = await owner.client.post(list, { callback_url: 'https://hooks.parcels.example/kinds' });
    const page = visibleText(added.html);
    for (const kind of EVENT_KINDS) expect(page).toContain(`${kind} :`);
    expect(page).toContain('ping : a test event');
    const endpoint = endpointLink((await owner.client.get(list)).html);
    const moved = await owner.client.post(endpoint, { callback_url: 'https://hooks.parcels.example/moved' });
    expect(moved.status).toBe(200);
    expect(visibleText(moved.html)).toContain('Address saved.');
    expect(await storedEndpoints(owner.companyId)).toEqual(['https://hooks.parcels.example/moved']);
    const empty = await owner.client.post(endpoint, { callback_url: ' ' });
    expect(empty.status).toBe(400);
    expect(visibleText(empty.html)).toContain('Enter the address, or remove the endpoint below.');
    await owner.client.post(`${endpoint}/remove`);
  });

  it('on the first endpoint, asks what becomes of the events waiting, and drops only those the page showed', async () => {
    const held = await companyOwner(cloud, { name: 'Held Couriers' });
    await enqueuePings(cloud.ctx, held.companyId, 3);
    const path = `/company/${held.companyId}/callback`;
    const page = await held.client.get(path);
    expect(visibleText(page.html)).toContain('3 events waiting since');
    const upTo = heldUpTo(page.html);
    expect(upTo).toBeDefined();

    const unanswered = await held.client.post(path, { callback_url: 'https://hooks.parcels.example/new' });
    expect(unanswered.status).toBe(400);
    expect(visibleText(unanswered.html)).toContain(
      'Choose whether to send the 3 events waiting, or drop them.',
    );
    const both = await held.client.post(path, { callback_url: 'http://hooks.parcels.example/new' });
    expect(visibleText(both.html)).toContain('must start with https://');
    expect(visibleText(both.html)).toContain('Choose whether to send the 3 events waiting');
    expect(await storedEndpoints(held.companyId)).toEqual([]);

    await enqueuePings(cloud.ctx, held.companyId);
    const dropped = await held.client.post(path, {
      callback_url: 'https://hooks.parcels.example/new',
      held: 'drop',
      held_up_to: upTo!,
    });
    expect(dropped.status).toBe(200);
    expect(visibleText(dropped.html)).toContain('The events that were waiting are dropped');
    expect(await storedEndpoints(held.companyId)).toEqual(['https://hooks.parcels.example/new']);
    // The one written after the page was shown stays, and goes to the new endpoint.
    expect(await outbox(cloud.ctx, held.companyId)).toHaveLength(1);
    expect(visibleText(dropped.html)).toContain('1 event waiting');
    expect((await held.client.get(path)).html).not.toContain('name="held"');
  });

  it('sends the events waiting when the company chooses so, and a second endpoint asks nothing and gets none', async () => {
    const kept = await companyOwner(cloud, { name: 'Kept Couriers' });
    await enqueuePings(cloud.ctx, kept.companyId, 2);
    const path = `/company/${kept.companyId}/callback`;
    const upTo = heldUpTo((await kept.client.get(path)).html);
    const sent = await kept.client.post(path, {
      callback_url: 'https://hooks.parcels.example/kept',
      held: 'send',
      held_up_to: upTo!,
    });
    expect(sent.status).toBe(200);
    expect(visibleText(sent.html)).toContain('The events that were waiting go to it first');
    expect(await outbox(cloud.ctx, kept.companyId)).toHaveLength(2);
    const again = await kept.client.post(path, { callback_url: 'https://hooks.parcels.example/second' });
    expect(again.status).toBe(200);
    expect(visibleText(again.html)).toContain('Endpoint added. ');
    expect(visibleText(again.html)).toContain('Nothing waiting');
    expect(await storedEndpoints(kept.companyId)).toEqual([
      'https://hooks.parcels.example/kept',
      'https://hooks.parcels.example/second',
    ]);
    expect(visibleText((await kept.client.get(path)).html)).toContain(
      'https://hooks.parcels.example/kept Working Every kind · 2 events waiting',
    );
  });

  const refusals: [string, string][] = [
    ['http://hooks.parcels.example/x', 'must start with https://'],
    ['hooks.parcels.example/x', 'Enter a whole address'],
    ['https://user:pass@hooks.parcels.example/', 'Leave the user name and password out'],
    ['https://localhost/hook', 'Check the host name'],
    ['https://127.0.0.1/hook', '127.0.0.1 is a loopback address'],
    ['https://10.0.0.7/hook', 'private'],
    ['https://[::1]/hook', 'loopback'],
    ['https://[::ffff:127.0.0.1]/hook', 'use a public one'],
    ['https://sneaky.example/hook', 'sneaky.example resolves to 127.0.0.1'],
    ['https://intranet.example/hook', 'intranet.example resolves to 10.1.2.3'],
    ['https://six.example/hook', 'six.example resolves to fd00::1'],
    ['https://nowhere.example/hook', 'nowhere.example has no address in DNS'],
  ];
  for (const [address, words] of refusals) {
    it(`[attack:web.callback-private] refuses ${address} as a new endpoint and as a new address, says why, and keeps the saved one`, async () => {
      const list = `/company/${owner.companyId}/callback`;
      await owner.client.get(list);
      if ((await storedEndpoints(owner.companyId)).length === 0) {
        await owner.client.post(list, { callback_url: 'https://hooks.parcels.example/ok' });
      }
      const refused = await owner.client.post(list, { callback_url: address });
      expect(refused.status).toBe(400);
      expect(visibleText(refused.html)).toContain(words);
      expect(refused.html).toContain('aria-invalid="true"');
      const endpoint = endpointLink(refused.html);
      const moved = await owner.client.post(endpoint, { callback_url: address });
      expect(moved.status).toBe(400);
      expect(visibleText(moved.html)).toContain(words);
      expect(moved.html).toContain('aria-invalid="true"');
      expect(await storedEndpoints(owner.companyId)).toEqual(['https://hooks.parcels.example/ok']);
    });
  }
});

describe("the company's requests", () => {
  let owner: CompanyOwner;
  beforeAll(async () => {
    owner = await companyOwner(cloud, { name: 'Many Requests Ltd' });
    await approveDirectly(cloud, owner.companyId);
    await cloud.ctx.db.transaction().execute(async (trx) => {
      for (let i = 1; i <= 65; i++) {
        await createRequest(trx, {
          companyId: owner.companyId,
          ref: i % 2 === 0 ? `ORDER-${i}` : `RETURN-${i}`,
          ttlHours: 24,
          now: cloud.ctx.clock.now(),
        });
      }
    });
    const customer = await createCustomer(cloud.ctx, { displayName: 'Claimer' });
    const barrier = await journalBarrier(cloud.ctx, customer.id, 'Yard');
    await grantKey(cloud.ctx, { customerId: customer.id, barrier, companyId: owner.companyId });
  });

  it('lists them newest first with their states, paged by links that keep the filters', async () => {
    const first = await owner.client.get(`/company/${owner.companyId}/requests`);
    const text = visibleText(first.html);
    expect(text).toContain('Latest requests');
    expect(text.indexOf('RETURN-65')).toBeLessThan(text.indexOf('ORDER-64'));
    expect(text).toContain('Issued');
    const older = /href="([^"]*before=\d+[^"]*)"/.exec(first.html)?.[1]?.replace(/&amp;/g, '&');
    expect(older).toBeDefined();
    const second = visibleText((await owner.client.get(older!)).html);
    expect(second).toContain('Older requests');
    expect(second).toContain('RETURN-1');
    expect(second).not.toContain('RETURN-65');
  });

  it('filters by state and by the beginning of ref', async () => {
    const orders = visibleText(
      (await owner.client.get(`/company/${owner.companyId}/requests?ref=ORDER-&state=new`)).html,
    );
    expect(orders).toContain('ORDER-64');
    expect(orders).not.toContain('RETURN-');
    const issued = visibleText(
      (await owner.client.get(`/company/${owner.companyId}/requests?state=issued`)).html,
    );
    expect(issued).toContain('Issued');
    expect(issued).not.toContain('ORDER-64');
  });

  it('shows a page, never an error, for filters that make no sense', async () => {
    for (const query of ['state=flying', 'before=-3', 'before=abc', 'ref=%00', 'state=new&state=issued']) {
      const page = await owner.client.get(`/company/${owner.companyId}/requests?${query}`);
      expect(page.status, query).toBe(200);
    }
    const wildcard = visibleText(
      (await owner.client.get(`/company/${owner.companyId}/requests?ref=%25`)).html,
    );
    expect(wildcard).toContain('No request matches these filters');
  });
});

describe("the company's openings", () => {
  let ours: CompanyOwner;
  let theirs: CompanyOwner;
  let ourKey: KeyHolder;
  beforeAll(async () => {
    ours = await companyOwner(cloud, { name: 'Our Couriers' });
    theirs = await companyOwner(cloud, { name: 'Their Couriers' });
    const customer = await createCustomer(cloud.ctx, { displayName: 'Shared customer' });
    const barrier = await journalBarrier(cloud.ctx, customer.id, 'Private name of the customer', [
      'Front gate',
    ]);
    await cloud.ctx.db
      .updateTable('devices')
      .set({ label: 'Lipowa 5 gate' })
      .where('id', '=', barrier.deviceId)
      .execute();
    ourKey = {
      companyId: ours.companyId,
      name: 'Our Couriers',
      keyRef: await grantKey(cloud.ctx, { customerId: customer.id, barrier, companyId: ours.companyId }),
    };
    const theirKey = {
      companyId: theirs.companyId,
      name: 'Their Couriers',
      keyRef: await grantKey(cloud.ctx, { customerId: customer.id, barrier, companyId: theirs.companyId }),
    };
    await insertEntries(cloud.ctx, barrier, [
      { holder: ourKey, actor: 'Anna Nowak, van 7' },
      { holder: theirKey, actor: 'Their driver' },
      { holder: ourKey, actor: 'Piotr, van 2', outcome: 'revoked' },
      { holder: ourKey, actor: 'Anna Nowak, van 7', outcome: 'device_error', detail: 'relay_fault' },
    ]);
  });

  it('answers "did my employee open that gate?": actor, outcome, object and barrier label, ref and time', async () => {
    const page = visibleText((await ours.client.get(`/company/${ours.companyId}/journal?actor=anna`)).html);
    expect(page).toContain('Anna Nowak, van 7');
    expect(page).toContain('Opened');
    expect(page).toContain('Controller reported a fault: relay_fault');
    expect(page).toContain('Front gate, Lipowa 5 gate');
    expect(page).toContain(`key_ref ${ourKey.keyRef}`);
    expect(page).not.toContain('Piotr');
    const refused = visibleText(
      (await ours.client.get(`/company/${ours.companyId}/journal?outcome=revoked`)).html,
    );
    expect(refused).toContain('Piotr, van 2');
    expect(refused).toContain('Refused: access withdrawn');
    expect(refused).not.toContain('Anna');
  });

  it("[attack:web.company-journal-other-company] shows only the company's own entries, and never the customer's name for the barrier", async () => {
    const page = visibleText((await ours.client.get(`/company/${ours.companyId}/journal`)).html);
    expect(page).not.toContain('Their driver');
    expect(page).not.toContain('Private name of the customer');
    const other = visibleText((await theirs.client.get(`/company/${theirs.companyId}/journal`)).html);
    expect(other).toContain('Their driver');
    expect(other).not.toContain('Anna');
  });

  it('[attack:web.company-other-company] a member of another company gets 404 for these pages and their forms', async () => {
    for (const path of ['/journal', '/requests', '/callback']) {
      expect((await theirs.client.get(`/company/${ours.companyId}${path}`)).status).toBe(404);
    }
    const list = `/company/${ours.companyId}/callback`;
    // The grant above is an event held while there is no endpoint: the first one asks about it.
    const held_up_to = heldUpTo((await ours.client.get(list)).html)!;
    const added = await ours.client.post(list, {
      callback_url: 'https://hooks.parcels.example/ours',
      held: 'send',
      held_up_to,
    });
    expect(added.status).toBe(200);
    const endpoint = endpointLink((await ours.client.get(list)).html);
    const endpointId = endpoint.split('/').at(-1)!;
    await theirs.client.get(`/company/${theirs.companyId}/callback`);
    const hijack = await theirs.client.post(list, { callback_url: 'https://hooks.parcels.example/steal' });
    expect(hijack.status).toBe(404);
    // Our endpoint's page and forms, under our company's address and under theirs.
    for (const path of [endpoint, `/company/${theirs.companyId}/callback/${endpointId}`]) {
      expect((await theirs.client.get(path)).status, path).toBe(404);
      const forms: [string, Record<string, string>][] = [
        ['', { callback_url: 'https://hooks.parcels.example/steal' }],
        ['/kinds', { take: 'these', kinds: 'ping' }],
        ['/signing-secret', { replaces: '0' }],
        ['/remove', {}],
      ];
      for (const [form, fields] of forms) {
        expect((await theirs.client.post(`${path}${form}`, fields)).status, `${path}${form}`).toBe(404);
      }
    }
    expect(await storedEndpoints(ours.companyId)).toEqual(['https://hooks.parcels.example/ours']);
    expect(await storedEndpoints(theirs.companyId)).toEqual([]);
  });
});
