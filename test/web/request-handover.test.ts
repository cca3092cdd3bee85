import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CODE_LOOKUPS } from '../../cloud/faces/customer-pages/request-routes.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import {
  companyRequest,
  companyStatus,
  insertBarrier,
  type SecretAuth,
  type TestBarrier,
} from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { mailOutbox } from '../support/mail-outbox.js';

/*
 * Passing a claimed request on (docs/design.md section 9.2): its holder hands it to someone they share a barrier
 * with who may grant on it; that person is e-mailed the link, sees who passed it, and answers in the holder's
 * place. Nobody outside the household, and no look-only member, can be handed a request, and only the holder
 * passes it. The company sees a claimed request throughout.
 */
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
const outbox = mailOutbox();
const { notices } = outbox;
let database: TestDatabase;
let cloud: TestCloud;
let company: SecretAuth;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({
    database,
    clock,
    mailer: outbox.mailer,
  });
  company = await secretCompany(cloud, 'Quick Couriers');
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

beforeEach(() => clock.advance(CODE_LOOKUPS.windowMs));

const text = visibleText;

async function person(name: string) {
  const email = `${name.toLowerCase()}@example.com`;
  const customer = await createCustomer(cloud.ctx, { displayName: name, email });
  return { id: customer.id, email, client: await BrowserClient.signedIn(cloud, customer.id) };
}

async function share(barrier: TestBarrier, memberId: number, ownerId: number, mayGrant: boolean) {
  await cloud.ctx.db
    .insertInto('barrier_members')
    .values({
      device_id: barrier.deviceId,
      customer_id: memberId,
      may_grant: mayGrant,
      added_by: ownerId,
      joined_at: clock.now(),
    })
    .execute();
}

/** An owner with a barrier shared with a member who may grant and one who may only look, and a stranger. */
async function household(prefix: string) {
  const owner = await person(`${prefix}Owner`);
  const granter = await person(`${prefix}Granter`);
  const looker = await person(`${prefix}Looker`);
  const stranger = await person(`${prefix}Stranger`);
  const barrier = await insertBarrier(cloud, owner.id, { name: `${prefix} house` });
  await insertBarrier(cloud, stranger.id, { name: `${prefix} elsewhere` });
  await share(barrier, granter.id, owner.id, true);
  await share(barrier, looker.id, owner.id, false);
  return { owner, granter, looker, stranger, barrier };
}

async function claimed(client: BrowserClient) {
  const code = await companyRequest(cloud, company);
  await client.get(`/c/${code}`);
  expect((await client.post(`/c/${code}/claim`)).status).toBe(303);
  return code;
}

async function holderOf(code: string) {
  return cloud.ctx.db
    .selectFrom('requests')
    .select(['state', 'customer_id', 'handed_by'])
    .where('code', '=', code)
    .executeTakeFirstOrThrow();
}

describe('passing a claimed request to someone of the household', () => {
  it('offers only the people who share a barrier and may grant on it', async () => {
    const { owner } = await household('Offer');
    const code = await claimed(owner.client);
    const page = await owner.client.get(`/c/${code}`);
    const form = /<form[^>]*action="\/c\/[^"]+\/hand-over"[^>]*>[\s\S]*?<\/form>/.exec(page.html)?.[0] ?? '';
    expect(text(form)).toContain('Pass this request to');
    expect(text(form)).toContain('OfferGranter (offergranter@example.com)');
    expect(form).not.toContain('OfferLooker');
    expect(form).not.toContain('OfferStranger');
    expect(form).toContain('name="_csrf"');
  });

  it('is not offered to someone who shares no barrier', async () => {
    const alone = await person('Alone');
    await insertBarrier(cloud, alone.id, { name: 'Alone gate' });
    const code = await claimed(alone.client);
    const page = await alone.client.get(`/c/${code}`);
    expect(page.html).toContain('Grant access');
    expect(page.html).not.toContain('/hand-over');
  });

  it('hands it over: the member is e-mailed, sees who passed it and answers; the company sees it claimed', async () => {
    const { owner, granter } = await household('Pass');
    const code = await claimed(owner.client);
    notices.length = 0;
    const passed = await owner.client.post(`/c/${code}/hand-over`, { to: String(granter.id) });
    expect(passed.status).toBe(303);
    expect(await holderOf(code)).toEqual({ state: 'claimed', customer_id: granter.id, handed_by: owner.id });

    expect(notices).toHaveLength(1);
    expect(notices[0]!.to).toBe(granter.email);
    expect(notices[0]!.subject).toBe("PassOwner asks you to answer Quick Couriers's request");
    expect(notices[0]!.text).toContain(`/c/${code}`);

    const ownerPage = text((await owner.client.get(`/c/${code}`)).html);
    expect(ownerPage).toContain('You passed this request to PassGranter, who answers it now.');
    expect(ownerPage).not.toContain('Grant access');

    const memberPage = await granter.client.get(`/c/${code}`);
    expect(text(memberPage.html)).toContain('PassOwner passed this request to you to answer.');
    expect(memberPage.html).toContain('Grant access');
    expect(memberPage.html).toContain(`action="/c/${code}/decline"`);

    expect((await companyStatus(cloud, company, code)).body.state).toBe('claimed');
    expect((await granter.client.post(`/c/${code}/decline`)).status).toBe(303);
    expect((await companyStatus(cloud, company, code)).body.state).toBe('declined');
  });

  it('[attack:web.handover-outside-household] refuses a look-only member and a stranger, saying why, and changes nothing', async () => {
    const { owner, looker, stranger } = await household('Refuse');
    const code = await claimed(owner.client);
    for (const to of [String(looker.id), String(stranger.id), 'nobody', '']) {
      const answer = await owner.client.post(`/c/${code}/hand-over`, { to });
      expect(answer.status).toBe(400);
      expect(text(answer.html)).toContain(
        'Choose someone who shares one of your barriers and may grant on it.',
      );
      expect(await holderOf(code)).toEqual({ state: 'claimed', customer_id: owner.id, handed_by: null });
    }
  });

  it('[attack:web.handover-outside-household] is the holder’s alone: whoever passed it, or anyone else, cannot pass it again', async () => {
    const { owner, granter, stranger } = await household('Once');
    const code = await claimed(owner.client);
    await owner.client.post(`/c/${code}/hand-over`, { to: String(granter.id) });
    for (const client of [owner.client, stranger.client]) {
      await client.get(`/c/${code}`);
      const again = await client.post(`/c/${code}/hand-over`, { to: String(stranger.id) });
      expect(again.status).toBe(303);
      expect(await holderOf(code)).toEqual({
        state: 'claimed',
        customer_id: granter.id,
        handed_by: owner.id,
      });
    }
  });

  it('is forgotten when the new holder releases it, so the next claimer sees no hand-over', async () => {
    const { owner, granter } = await household('Forget');
    const code = await claimed(owner.client);
    await owner.client.post(`/c/${code}/hand-over`, { to: String(granter.id) });
    await granter.client.get(`/c/${code}`);
    expect((await granter.client.post(`/c/${code}/release`)).status).toBe(303);
    expect(await holderOf(code)).toEqual({ state: 'new', customer_id: null, handed_by: null });
    await owner.client.get(`/c/${code}`);
    await owner.client.post(`/c/${code}/claim`);
    expect(text((await owner.client.get(`/c/${code}`)).html)).not.toContain('passed this request');
  });
});
