import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpired } from '../../cloud/rules/access-keys/expiry.js';
import { issueSecret } from '../../cloud/rules/call-auth/secret.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { declineRequest } from '../../cloud/rules/requests/decline.js';
import { visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { approveDirectly, companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * A company's requests list and `status` agree on a request's state (docs/design.md sections 3 and 11.4): one
 * past its lifetime is `expired` from that moment, in the list and in its state filter, before the sweep has
 * recorded it as after; one the customer declined is `declined`, with its time, and stays so.
 */
const HOUR = 3600 * 1000;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

describe("a company's requests past their lifetime", () => {
  it('are expired in the list and its filter as in status, before and after the sweep', async () => {
    const owner = await companyOwner(cloud, { name: 'Late Couriers' });
    await approveDirectly(cloud, owner.companyId);
    const auth = { org_id: owner.companyId, secret: (await issueSecret(cloud.ctx, owner.companyId)).secret };
    const lapsing = (await cloud.call('request', { ...auth, ref: 'LAPSING', ttl_hours: 1 })).body
      .code as string;
    const living = (await cloud.call('request', { ...auth, ref: 'LIVING', ttl_hours: 24 })).body
      .code as string;
    clock.advance(2 * HOUR);
    expect((await cloud.call('status', { ...auth, code: lapsing })).body.state).toBe('expired');

    const path = `/company/${owner.companyId}/requests`;
    const refsOn = async (query: string) => {
      const page = await owner.client.get(`${path}${query}`);
      expect(page.status).toBe(200);
      return [...page.html.matchAll(/<strong>([A-Z]+)<\/strong>/g)].map((match) => match[1]);
    };
    for (const when of ['before the sweep', 'after the sweep']) {
      const all = visibleText((await owner.client.get(path)).html);
      expect(all, when).toMatch(/LAPSING code \w+ Created [^·]+ · Expired [^·]+ UTC Expired/);
      expect(all, when).toMatch(/LIVING code \w+ Created [^·]+ UTC New/);
      expect(await refsOn('?state=expired'), when).toEqual(['LAPSING']);
      expect(await refsOn('?state=new'), when).toEqual(['LIVING']);
      await sweepExpired(cloud.ctx);
    }
    expect(living).toHaveLength(12);
  });
});

describe("a company's declined requests", () => {
  it('are declined in the list, with when, and in the Declined filter, past their lifetime and the sweep too', async () => {
    const owner = await companyOwner(cloud, { name: 'Turned Down Ltd' });
    await approveDirectly(cloud, owner.companyId);
    const auth = { org_id: owner.companyId, secret: (await issueSecret(cloud.ctx, owner.companyId)).secret };
    const refused = (await cloud.call('request', { ...auth, ref: 'REFUSED', ttl_hours: 1 })).body
      .code as string;
    await cloud.call('request', { ...auth, ref: 'WAITING', ttl_hours: 24 });
    const customerId = (await createCustomer(cloud.ctx, { displayName: 'Nay Sayer' })).id;
    await claimRequest(cloud.ctx, { code: refused, customerId });
    await declineRequest(cloud.ctx, { code: refused, customerId });
    expect((await cloud.call('status', { ...auth, code: refused })).body.state).toBe('declined');

    const path = `/company/${owner.companyId}/requests`;
    const refsOn = async (query: string) => {
      const page = await owner.client.get(`${path}${query}`);
      expect(page.status).toBe(200);
      return [...page.html.matchAll(/<strong>([A-Z]+)<\/strong>/g)].map((match) => match[1]);
    };
    const first = await owner.client.get(path);
    expect(first.html).toContain('<option value="declined">Declined</option>');
    for (const when of ['within its lifetime', 'past it, after the sweep']) {
      const all = visibleText((await owner.client.get(path)).html);
      expect(all, when).toMatch(
        /REFUSED code \w+ Created [^·]+ · Claimed [^·]+ · Declined [^·]+ UTC Declined/,
      );
      expect(await refsOn('?state=declined'), when).toEqual(['REFUSED']);
      expect(await refsOn('?state=expired'), when).toEqual([]);
      expect(await refsOn('?state=claimed'), when).toEqual([]);
      clock.advance(2 * HOUR);
      await sweepExpired(cloud.ctx);
    }
    expect((await cloud.call('status', { ...auth, code: refused })).body.state).toBe('declined');
  });
});
