import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSession } from '../../cloud/foundation/web/sessions.js';
import { revokeAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { PAGE_SIZE } from '../../cloud/rules/journal/barrier-journal.js';
import { ENTRY_OUTCOMES, OUTCOME_WORDS } from '../../cloud/rules/journal/outcome-words.js';
import {
  grantKey,
  insertEntries,
  type JournalBarrier,
  journalBarrier,
  type KeyHolder,
  keyHolder,
} from '../support/barrier-journal.js';
import {
  chromiumMissing,
  launchChromium,
  newProfile,
  screenshot,
  seriousAccessibilityViolations,
} from '../support/browser.js';
import { BrowserClient, type PageAnswer, visibleText } from '../support/browser-client.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * A barrier's journal as its customer sees it (docs/design.md section 10.5): newest first, refused attempts
 * included, every outcome in words, keyset pages without gaps or repeats, filters by company and outcome, the
 * company's text shown as text, and nothing of another customer's.
 */
let database: TestDatabase;
let cloud: TestCloud;
let customerId: number;
let client: BrowserClient;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  customerId = (await createCustomer(cloud.ctx, { displayName: 'Jana Journal' })).id;
  client = await BrowserClient.signedIn(cloud, customerId);
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

/** The entry ids of a page, in the order shown. */
function entryIds(page: PageAnswer): number[] {
  return [...page.html.matchAll(/<li class="entry" id="entry-(\d+)"/g)].map((match) => Number(match[1]));
}

/** The href of the link with this text, as a browser would follow it. */
function linkTo(page: PageAnswer, text: string): string | undefined {
  const match = new RegExp(`<a [^>]*href="([^"]+)"[^>]*>${text}</a>`).exec(page.html);
  return match?.[1]?.replaceAll('&amp;', '&');
}

async function journalPage(barrier: JournalBarrier, query = ''): Promise<PageAnswer> {
  const page = await client.get(`/barriers/${barrier.deviceId}/journal${query}`);
  expect(page.status, visibleText(page.html)).toBe(200);
  return page;
}

/** Follows "Older entries" from the first page to the last; every page's entry ids. */
async function allPages(barrier: JournalBarrier, query = ''): Promise<number[][]> {
  const pages: number[][] = [];
  let url: string | undefined = `/barriers/${barrier.deviceId}/journal${query}`;
  while (url) {
    const page = await client.get(url);
    expect(page.status).toBe(200);
    pages.push(entryIds(page));
    url = linkTo(page, 'Older entries');
    expect(pages.length).toBeLessThan(50);
  }
  return pages;
}

describe('a barrier with an entry of every outcome', () => {
  let barrier: JournalBarrier;
  let holder: KeyHolder;
  let ids: number[];

  beforeAll(async () => {
    barrier = await journalBarrier(cloud.ctx, customerId, 'Courtyard');
    holder = await keyHolder(cloud.ctx, {
      customerId,
      barrier,
      name: 'Demo Cleaning Ltd',
      domain: 'demo-cleaning.example',
    });
    ids = await insertEntries(
      cloud.ctx,
      barrier,
      ENTRY_OUTCOMES.map((outcome, i) => ({
        holder,
        outcome,
        actor: `Person ${i}`,
        detail: outcome === 'device_error' ? 'relay_fault' : null,
        at: new Date(Date.UTC(2025, 0, 2, 8, i, 0)),
        object: i % 2,
      })),
    );
  });

  it('shows them newest first, refused attempts included, each outcome in words', async () => {
    const page = await journalPage(barrier);
    expect(entryIds(page)).toEqual([...ids].reverse());
    const text = visibleText(page.html);
    const expected: Record<string, string> = {
      ...OUTCOME_WORDS,
      device_error: 'Controller reported a fault: relay_fault',
    };
    expect(expected).toMatchObject({
      opened: 'Opened',
      revoked: 'Refused: access withdrawn',
      expired: 'Refused: key expired',
      rate_limit: 'Refused: too many openings',
      forbidden: 'Refused: not in the key',
      device_offline: 'Not opened: controller offline',
      device_timeout: 'No answer from the controller',
      pending: 'In progress',
    });
    let last = -1;
    for (const [i, outcome] of [...ENTRY_OUTCOMES.entries()].reverse()) {
      const line = `Person ${i} of Demo Cleaning Ltd (demo-cleaning.example) ${expected[outcome]}`;
      expect(text).toContain(line);
      expect(text.indexOf(line)).toBeGreaterThan(last);
      last = text.indexOf(line);
    }
    expect(text).toContain('Main gate');
    expect(text).toContain('Side door');
    expect(page.html).toContain('<time datetime="2025-01-02T08:00:00.000Z">2 Jan 2025, 08:00 UTC</time>');
    expect(text).not.toMatch(/\b(rate_limit|device_offline|device_timeout|forbidden)\b/);
  });

  it("puts the company's initial beside every line, until it has a logo", async () => {
    const page = await journalPage(barrier);
    const lines = page.html.split('<li class="entry"').slice(1);
    expect(lines).toHaveLength(ENTRY_OUTCOMES.length);
    for (const line of lines)
      expect(line).toMatch(/^[^>]*>\s*<span class="logo small" aria-hidden="true">D<\/span>/);
  });

  it('offers the companies holding keys on the barrier, and every outcome, as filters', async () => {
    const page = await journalPage(barrier);
    expect(page.html).toContain(
      `<option value="${holder.companyId}">Demo Cleaning Ltd (demo-cleaning.example)</option>`,
    );
    for (const outcome of ENTRY_OUTCOMES) {
      expect(page.html).toContain(`<option value="${outcome}">${OUTCOME_WORDS[outcome]}</option>`);
    }
    expect(linkTo(page, 'Download the journal as CSV')).toBe(`/barriers/${barrier.deviceId}/journal.csv`);
  });

  it('filters by outcome, the null outcome of an entry in flight included', async () => {
    const refused = await journalPage(barrier, '?outcome=revoked');
    expect(entryIds(refused)).toEqual([ids[ENTRY_OUTCOMES.indexOf('revoked')]]);
    expect(refused.html).toContain('<option value="revoked" selected>');
    const pending = await journalPage(barrier, '?outcome=pending&company=');
    expect(entryIds(pending)).toEqual([ids[ENTRY_OUTCOMES.indexOf('pending')]]);
  });
});

describe('paging and filters', () => {
  let barrier: JournalBarrier;
  let cleaner: KeyHolder;
  let courier: KeyHolder;
  let all: number[];

  beforeAll(async () => {
    barrier = await journalBarrier(cloud.ctx, customerId, 'Loading bay');
    cleaner = await keyHolder(cloud.ctx, { customerId, barrier, name: 'Cleaner Co' });
    courier = await keyHolder(cloud.ctx, {
      customerId,
      barrier,
      name: 'Courier Co',
      domain: 'courier.example',
    });
    // 130 entries: the two companies in turn, one in five refused.
    all = await insertEntries(
      cloud.ctx,
      barrier,
      Array.from({ length: 130 }, (_, i) => ({
        holder: i % 2 === 0 ? cleaner : courier,
        outcome: i % 5 === 0 ? ('rate_limit' as const) : ('opened' as const),
        actor: `Driver ${i}`,
      })),
    );
  });

  const newestFirst = (ids: number[]) => [...ids].sort((a, b) => b - a);

  it(`pages ${PAGE_SIZE} at a time, older by "before", without gaps or repeats`, async () => {
    const pages = await allPages(barrier);
    expect(pages.map((page) => page.length)).toEqual([PAGE_SIZE, PAGE_SIZE, 130 - 2 * PAGE_SIZE]);
    expect(pages.flat()).toEqual(newestFirst(all));
  });

  it('keeps its pages when newer entries arrive between them', async () => {
    const first = await journalPage(barrier);
    const older = linkTo(first, 'Older entries')!;
    const [late] = await insertEntries(cloud.ctx, barrier, [{ holder: cleaner, actor: 'Late driver' }]);
    const second = await client.get(older);
    expect(entryIds(second)).toEqual(newestFirst(all).slice(PAGE_SIZE, 2 * PAGE_SIZE));
    expect(linkTo(second, 'Newest entries')).toBe(`/barriers/${barrier.deviceId}/journal`);
    expect(entryIds(await journalPage(barrier))[0]).toBe(late);
    all.push(late!);
  });

  it('filters by company, by outcome and by both, and the older link carries the filters', async () => {
    const entries = await cloud.ctx.db
      .selectFrom('journal')
      .select(['id', 'company_id', 'outcome'])
      .where('device_id', '=', barrier.deviceId)
      .execute();
    const expectIds = (keep: (row: (typeof entries)[number]) => boolean) =>
      newestFirst(entries.filter(keep).map((row) => row.id));

    const byCompany = await allPages(barrier, `?company=${courier.companyId}`);
    expect(byCompany.flat()).toEqual(expectIds((row) => row.company_id === courier.companyId));
    const byOutcome = await allPages(barrier, '?outcome=rate_limit');
    expect(byOutcome.flat()).toEqual(expectIds((row) => row.outcome === 'rate_limit'));
    const both = await allPages(barrier, `?company=${cleaner.companyId}&outcome=opened`);
    expect(both.flat()).toEqual(
      expectIds((row) => row.company_id === cleaner.companyId && row.outcome === 'opened'),
    );
    expect(both.flat().length).toBeGreaterThan(PAGE_SIZE);

    const first = await journalPage(barrier, `?company=${cleaner.companyId}&outcome=opened`);
    const older = new URL(linkTo(first, 'Older entries')!, 'http://x');
    expect(Object.fromEntries(older.searchParams)).toEqual({
      company: String(cleaner.companyId),
      outcome: 'opened',
      before: String(entryIds(first).at(-1)),
    });
    expect(linkTo(first, 'Download these entries as CSV')).toBe(
      `/barriers/${barrier.deviceId}/journal.csv?company=${cleaner.companyId}&outcome=opened`,
    );
    expect(first.html).toContain(`<option value="${cleaner.companyId}" selected>Cleaner Co</option>`);
  });

  it('says when no entry matches, and offers the whole journal', async () => {
    const page = await journalPage(barrier, `?company=${courier.companyId}&outcome=expired`);
    expect(entryIds(page)).toEqual([]);
    expect(visibleText(page.html)).toContain('No entries match these filters. Show every entry');
    const stranger = await journalPage(barrier, '?company=2147483647');
    expect(entryIds(stranger)).toEqual([]);
  });

  it.each([
    ['an unknown outcome', '?outcome=exploded', 'outcome'],
    ['a company that is not a number', '?company=abc', 'company'],
    ['a repeated company', '?company=1&company=2', 'company'],
    ['before of zero', '?before=0', 'before'],
    ['before beyond any id', '?before=99999999999', 'before'],
    ['before with a sign', '?before=-5', 'before'],
  ])('answers %s with 400 and a page naming the field, never a 500', async (_label, query, field) => {
    for (const suffix of ['', '.csv']) {
      const page = await client.get(`/barriers/${barrier.deviceId}/journal${suffix}${query}`);
      expect(page.status).toBe(400);
      expect(page.headers['content-type']).toContain('text/html');
      expect(visibleText(page.html)).toContain(`${field}:`);
    }
  });
});

describe('an empty journal', () => {
  it('says so, and offers no pages', async () => {
    const barrier = await journalBarrier(cloud.ctx, customerId, 'New gate');
    const page = await journalPage(barrier);
    expect(visibleText(page.html)).toContain('The journal is empty');
    expect(entryIds(page)).toEqual([]);
    expect(linkTo(page, 'Older entries')).toBeUndefined();
  });
});

describe('openings made through the company API', () => {
  it('appear in the journal, the refused attempt after withdrawal included', async () => {
    const barrier = await journalBarrier(cloud.ctx, customerId, 'API gate');
    const company = await secretCompany(cloud, 'Api Movers');
    const keyRef = await grantKey(cloud.ctx, { customerId, barrier, companyId: company.org_id });
    const open = (actor: string) =>
      cloud.call('open', { ...company, key_ref: keyRef, number_id: barrier.objects[0]!.id, actor });
    expect((await open('Mover one')).status).toBe(503);
    await revokeAccessKey(cloud.ctx, { keyRef, customerId });
    expect((await open('Mover two')).status).toBe(403);
    const text = visibleText((await journalPage(barrier)).html);
    expect(text).toContain(
      'Mover two of Api Movers (domain not confirmed) Refused: access withdrawn Main gate',
    );
    expect(text).toContain('Mover one of Api Movers (domain not confirmed) Not opened: controller offline');
    expect(text.indexOf('Mover two')).toBeLessThan(text.indexOf('Mover one'));
  });
});

describe('what a company wrote', () => {
  it('[attack:web.actor-markup] shows an actor holding markup as text, and no element comes of it', async () => {
    const barrier = await journalBarrier(cloud.ctx, customerId, 'Markup gate');
    const holder = await keyHolder(cloud.ctx, { customerId, barrier, name: '<b>Bold</b> & Sons' });
    const actor = '<script>alert(1)</script><img src=x onerror=alert(2)>';
    await insertEntries(cloud.ctx, barrier, [{ holder, actor, outcome: 'opened' }]);
    const page = await journalPage(barrier);
    expect(page.html).toContain('&lt;script>alert(1)&lt;/script>&lt;img src=x onerror=alert(2)>');
    expect(page.html).not.toContain('<script>alert');
    expect(page.html).not.toContain('<img src=x');
    expect(page.html).not.toContain('<b>Bold');
    const tags = page.html.match(/<[a-z][^>]*>/gi) ?? [];
    expect(tags.filter((tag) => /^<script/i.test(tag) && !tag.includes('src="/assets/'))).toEqual([]);
    expect(tags.filter((tag) => /\son[a-z]+=|^<img src=x/i.test(tag))).toEqual([]);
    expect(visibleText(page.html)).toContain(`${actor} of <b>Bold</b> & Sons`);
  });
});

describe('who may see a journal', () => {
  it("[attack:web.other-customer-urls] answers 404 for another customer's journal and export, and shows nothing of theirs", async () => {
    const other = (await createCustomer(cloud.ctx, { displayName: 'Otto Other' })).id;
    const theirs = await journalBarrier(cloud.ctx, other, 'Otto private gate');
    const holder = await keyHolder(cloud.ctx, {
      customerId: other,
      barrier: theirs,
      name: 'Otto Secret Ltd',
    });
    await insertEntries(cloud.ctx, theirs, [{ holder, actor: 'Otto courier' }]);
    const missing = await client.get('/barriers/DNOSUCHBARRIER/journal');
    expect(missing.status).toBe(404);
    for (const path of [
      `/barriers/${theirs.deviceId}/journal`,
      `/barriers/${theirs.deviceId}/journal?before=2&outcome=opened`,
      `/barriers/${theirs.deviceId}/journal.csv`,
      `/barriers/${theirs.deviceId}/journal.csv?company=${holder.companyId}`,
    ]) {
      const page = await client.get(path);
      expect(page.status, path).toBe(404);
      expect(visibleText(page.html), path).toBe(visibleText(missing.html));
      for (const secret of ['Otto', theirs.deviceId]) expect(page.html).not.toContain(secret);
    }
    // A filter the page never makes is refused alike for any barrier, theirs or none.
    const bogus = await client.get(`/barriers/${theirs.deviceId}/journal?outcome=bogus`);
    const bogusNone = await client.get('/barriers/DNOSUCHBARRIER/journal?outcome=bogus');
    expect(bogus.status).toBe(400);
    expect(visibleText(bogus.html)).toBe(visibleText(bogusNone.html));
    expect(bogus.html).not.toContain('Otto');
    const owner = await BrowserClient.signedIn(cloud, other);
    expect((await owner.get(`/barriers/${theirs.deviceId}/journal`)).status).toBe(200);
  });

  it("keeps a barrier's earlier owner's entries from its new owner", async () => {
    const earlier = (await createCustomer(cloud.ctx, { displayName: 'Earlier Owner' })).id;
    const barrier = await journalBarrier(cloud.ctx, earlier, 'Sold gate');
    const before = await keyHolder(cloud.ctx, { customerId: earlier, barrier, name: 'Before Sale Ltd' });
    await insertEntries(cloud.ctx, barrier, [{ holder: before, actor: 'Before the sale' }]);
    await cloud.ctx.db
      .updateTable('devices')
      .set({ customer_id: customerId })
      .where('id', '=', barrier.deviceId)
      .execute();
    const after = await keyHolder(cloud.ctx, { customerId, barrier, name: 'After Sale Ltd' });
    const [mine] = await insertEntries(cloud.ctx, barrier, [{ holder: after, actor: 'After the sale' }]);
    // More of the earlier owner's entries than a page holds, newer than the new owner's one.
    await insertEntries(
      cloud.ctx,
      barrier,
      Array.from({ length: 2 * PAGE_SIZE + 10 }, () => ({ holder: before, actor: 'Before key, later' })),
    );
    const page = await journalPage(barrier);
    expect(entryIds(page)).toEqual([mine]);
    expect(linkTo(page, 'Older entries')).toBeUndefined();
    expect(page.html).not.toContain('Before');
    const csv = await client.get(`/barriers/${barrier.deviceId}/journal.csv`);
    expect(csv.html).toContain('After the sale');
    expect(csv.html).not.toContain('Before');
  });

  it('sends a browser that is not signed in to sign in, and back', async () => {
    const barrier = await journalBarrier(cloud.ctx, customerId, 'Signed gate');
    const path = `/barriers/${barrier.deviceId}/journal?outcome=opened`;
    const page = await new BrowserClient(cloud.app).get(path);
    expect(page.status).toBe(303);
    expect(page.location).toBe(`/signin?next=${encodeURIComponent(path)}`);
    const csv = await new BrowserClient(cloud.app).get(`/barriers/${barrier.deviceId}/journal.csv`);
    expect(csv.status).toBe(303);
  });
});

describe.skipIf(chromiumMissing)('the journal in Chromium', () => {
  let browser: Browser;
  let barrier: JournalBarrier;
  let token: string;

  beforeAll(async () => {
    browser = await launchChromium();
    token = await startSession(cloud.ctx, customerId);
    barrier = await journalBarrier(cloud.ctx, customerId, 'Warehouse gate on Long Street');
    const cleaner = await keyHolder(cloud.ctx, {
      customerId,
      barrier,
      name: 'Demo Cleaning Ltd',
      domain: 'cleaning.example',
    });
    const movers = await keyHolder(cloud.ctx, {
      customerId,
      barrier,
      name: 'International Removals and Long Distance Logistics Company of the North',
    });
    await insertEntries(cloud.ctx, barrier, [
      ...Array.from({ length: 60 }, (_, i) => ({ holder: cleaner, actor: `Anna, shift ${i}` })),
      { holder: movers, actor: 'X'.repeat(128), outcome: 'revoked' },
      {
        holder: movers,
        actor: 'Driver with a rather long description: van 12, route north-east, second shift, Saturday',
        outcome: 'device_error',
        detail: 'relay_fault',
        object: 1,
      },
      ...ENTRY_OUTCOMES.map((outcome, i) => ({
        holder: i % 2 ? cleaner : movers,
        outcome,
        actor: `Kim ${i}`,
      })),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
  });

  for (const viewport of ['phone', 'desktop'] as const) {
    it(`reads, filters and pages at ${viewport} size, reaching no other host, passing axe`, async () => {
      const { context, page, foreignRequests } = await newProfile(browser, cloud.baseUrl, viewport);
      await context.addCookies([{ name: 'gatelink-session', value: token, url: cloud.baseUrl }]);
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      await page.goto(`/barriers/${barrier.deviceId}/journal`);
      await expect.poll(() => page.title()).toBe('Journal of Warehouse gate on Long Street · Gatelink');
      expect(await page.locator('li.entry').count()).toBe(PAGE_SIZE);
      await screenshot(page, 'journal', viewport);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      // Nothing is wider than the screen: long actors and names wrap.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);

      await page.selectOption('#journal-company', { label: 'Demo Cleaning Ltd (cleaning.example)' });
      await page.selectOption('#journal-outcome', { label: 'Opened' });
      await page.getByRole('button', { name: 'Show' }).click();
      await page.waitForURL(/outcome=opened/);
      const shown = await page.locator('li.entry .who').allTextContents();
      expect(shown.length).toBeGreaterThan(0);
      for (const line of shown) expect(line).toContain('Demo Cleaning Ltd');
      expect(await page.locator('li.entry .badge').allTextContents()).toEqual(shown.map(() => 'Opened'));
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'journal-filtered', viewport);

      await page.getByRole('link', { name: 'Older entries' }).click();
      await page.waitForURL(/before=/);
      expect(new URL(page.url()).searchParams.get('outcome')).toBe('opened');
      expect(await page.getByRole('link', { name: 'Newest entries' }).count()).toBe(1);

      expect(foreignRequests).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    });
  }
});
