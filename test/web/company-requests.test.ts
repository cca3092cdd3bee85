import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpired } from '../../cloud/rules/access-keys/expiry.js';
import { issueSecret } from '../../cloud/rules/call-auth/secret.js';
import { visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { approveDirectly, companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * A company's requests list and `status` agree on a request's state (docs/design.md sections 3 and 11.4): one
 * past its lifetime is `expired` from that moment, in the list and in its state filter, before the sweep has
 * recorded it as after.
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
