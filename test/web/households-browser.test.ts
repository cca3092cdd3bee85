import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODE_LOOKUPS } from '../../cloud/faces/customer-pages/request-routes.js';
import { startSession } from '../../cloud/foundation/web/sessions.js';
import {
  chromiumMissing,
  launchChromium,
  newProfile,
  screenshot,
  seriousAccessibilityViolations,
  type ViewportName,
} from '../support/browser.js';
import { layoutProblems } from '../support/browser-layout.js';
import { FakeClock } from '../support/clock.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import {
  companyRequest,
  companyStatus,
  insertBarrier,
  type SecretAuth,
  signedInCustomer,
} from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { mailOutbox } from '../support/mail-outbox.js';

/**
 * A barrier's household (docs/design.md section 9.2) in real Chromium, at a phone's and a desktop's size, with
 * one browser per person: the owner invites two people from the barrier's page, one who may grant and one who
 * may only look; each follows the link from their e-mail and accepts. A company's request, taken by the owner by
 * mistake and released, is granted by the member who may grant; a second one finds the look-only member with
 * nothing to grant on, who releases it, and the owner takes it and passes it to the granting member. The
 * barrier's history names that member, and the look-only member, once removed, finds the barrier's pages gone.
 * Every page passes axe, reaches no other host, logs no error, has no sideways scrolling and no squeezed boxes,
 * and leaves a screenshot under test/artifacts/.
 */

const COMPANY = 'Demo Cleaning Ltd';
const BARRIER = 'Mill Lane 4';

describe.skipIf(chromiumMissing)("a barrier's household in Chromium", () => {
  const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
  const outbox = mailOutbox();
  const { notices } = outbox;
  let database: TestDatabase;
  let cloud: TestCloud;
  let browser: Browser;
  let company: SecretAuth;

  beforeAll(async () => {
    database = await createTestDatabase();
    cloud = await startTestCloud({
      database,
      clock,
      mailer: outbox.mailer,
    });
    browser = await launchChromium();
    company = await secretCompany(cloud, COMPANY);
  });

  afterAll(async () => {
    await browser?.close();
    await cloud?.stop();
    await database?.close();
  });

  interface Person {
    id: number;
    name: string;
    email: string;
    context: BrowserContext;
    page: Page;
    foreignRequests: string[];
    errors: string[];
  }

  /**
   * Someone with an account whose address is confirmed, as signing in by code leaves it, signed in on a
   * browser of their own at `viewport`'s size.
   */
  async function person(name: string, viewport: ViewportName): Promise<Person> {
    const customer = await signedInCustomer(cloud, name);
    const email = `${name.split(' ')[0]!.toLowerCase()}.${viewport}@example.com`;
    await cloud.ctx.db
      .updateTable('customers')
      .set({ email, email_verified_at: clock.now() })
      .where('id', '=', customer.id)
      .execute();
    const { context, page, foreignRequests } = await newProfile(browser, cloud.baseUrl, viewport);
    // A step that cannot happen fails with its own message, well within the test's time.
    context.setDefaultTimeout(10_000);
    const value = await startSession(cloud.ctx, customer.id);
    await context.addCookies([{ name: 'gatelink-session', value, url: cloud.baseUrl }]);
    const errors: string[] = [];
    // The 404 pages and the refused grant are the answers meant; Chromium logs every such status.
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
        errors.push(`${name}: ${message.text()}`);
      }
    });
    page.on('pageerror', (error) => errors.push(`${name}: ${error.message}`));
    return { id: customer.id, name, email, context, page, foreignRequests, errors };
  }

  /**
   * Checks the page with axe, saves its screenshot, and checks its layout: nothing reaches past the window's
   * right edge (the page would scroll sideways) and no tick box or radio button is squeezed narrower than it is
   * tall by the text beside it. The layout checks are soft, so that the rest of the story still runs and every
   * page's problems are listed.
   */
  async function look(page: Page, name: string, viewport: ViewportName): Promise<void> {
    await expect.poll(() => page.title()).toContain('Gatelink');
    expect(await seriousAccessibilityViolations(page), name).toEqual([]);
    await screenshot(page, `household-${name}`, viewport);
    const layout = await layoutProblems(page);
    expect.soft(layout.wider, `${name}: what reaches past the window's right edge`).toEqual([]);
    expect.soft(layout.squeezed, `${name}: tick boxes and radio buttons squeezed`).toEqual([]);
    expect.soft(layout.clipped, `${name}: time and date fields too narrow to show their value`).toEqual([]);
  }

  /** The link of the newest invitation e-mailed to `email`, as its reader follows it. */
  function invitationLink(email: string): string {
    const message = notices.filter((notice) => notice.to === email).at(-1);
    expect(message, `no e-mail to ${email}`).toBeDefined();
    const link = /https?:\/\/\S+\/invitations\/[A-Za-z0-9_-]{43}/.exec(message!.text)?.[0];
    expect(link, `no invitation link in the e-mail to ${email}`).toBeDefined();
    return link!;
  }

  /** The visible text of the page's main content, as the person reads it. */
  function words(page: Page): Promise<string> {
    return page.locator('main').innerText();
  }

  /** Presses `button`, answering yes to the question it asks first (data-confirm), and returns the question. */
  async function pressAndConfirm(page: Page, button: ReturnType<Page['getByRole']>): Promise<string> {
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await button.click();
    await expect.poll(() => asked.length).toBe(1);
    return asked[0]!;
  }

  for (const viewport of ['phone', 'desktop'] as const) {
    const story =
      'inviting by e-mail, accepting, granting as a member, passing a request on, and removing a member';
    it(`at ${viewport} size: ${story}`, async () => {
      // A fresh window of the request lookups' limit, which every browser here shares (one client address).
      clock.advance(CODE_LOOKUPS.windowMs);
      const owner = await person('Anna Owner', viewport);
      const granter = await person('Dora Granter', viewport);
      const looker = await person('Carl Looker', viewport);
      const people = [owner, granter, looker];
      const barrier = await insertBarrier(cloud, owner.id, {
        name: BARRIER,
        labels: ['Main gate', 'Side door'],
        online: true,
      });
      const barrierPath = `/barriers/${barrier.deviceId}`;

      // 1. The owner invites both from the barrier's page, by typing and clicking.
      await owner.page.goto(barrierPath);
      const household = owner.page.getByRole('region', { name: 'People who share this barrier' });
      expect(await household.innerText()).toContain(`Nobody else shares ${BARRIER}.`);
      await household.getByLabel('E-mail address').fill(granter.email);
      await household.getByLabel('May grant and withdraw access').check();
      await household.getByRole('button', { name: 'Send invitation' }).click();
      await owner.page.waitForURL((url) => url.search === '?invited=1');
      await owner.page.getByText('Invitation sent').waitFor();
      // The form is empty again for the next person, its box not ticked.
      expect(await household.getByLabel('E-mail address').inputValue()).toBe('');
      expect(await household.getByLabel('May grant and withdraw access').isChecked()).toBe(false);
      await household.getByLabel('E-mail address').fill(looker.email);
      await household.getByRole('button', { name: 'Send invitation' }).click();
      await owner.page.getByText('Invitation sent').waitFor();
      const waiting = await household.innerText();
      expect(waiting).toContain('Invitations waiting');
      expect(waiting).toContain(`${granter.email} (may grant access;`);
      expect(waiting).toContain(`${looker.email} (can look only;`);
      await look(owner.page, 'invited', viewport);

      // 2. Each follows the link in their e-mail, reads who invites them to what, and accepts.
      for (const [guest, role] of [
        [granter, 'granter'],
        [looker, 'looker'],
      ] as const) {
        const mail = notices.filter((notice) => notice.to === guest.email).at(-1)!;
        expect(mail.subject).toBe(`${owner.name} invites you to share ${BARRIER} on Gatelink`);
        await guest.page.goto(invitationLink(guest.email));
        const heading = guest.page.getByRole('heading', { level: 1 });
        expect(await heading.innerText()).toBe(`${owner.name} invites you to share ${BARRIER}`);
        const invitation = await words(guest.page);
        expect(invitation).toContain(
          role === 'granter'
            ? 'and give and withdraw companies’ access'
            : 'you would not give or withdraw access',
        );
        expect(invitation).toContain('The link works once');
        await look(guest.page, `invitation-${role}`, viewport);
        await guest.page.getByRole('button', { name: 'Accept' }).click();
        await guest.page.waitForURL((url) => url.pathname === barrierPath && url.search === '?joined=1');
        const joined = await words(guest.page);
        expect(joined).toContain(`Welcome: ${BARRIER} is shared with you now.`);
        expect(joined).toContain(
          role === 'granter'
            ? `${owner.name} shares ${BARRIER} with you. You may give and withdraw companies’ access.`
            : `Shared by ${owner.name}. You can look, not grant.`,
        );
        // The household and the barrier's settings stay the owner's.
        expect(joined).not.toContain('People who share this barrier');
        expect(joined).not.toContain('Rename');
        await look(guest.page, `joined-${role}`, viewport);
      }
      await owner.page.goto(barrierPath);
      const members = await household.innerText();
      expect(members).not.toContain('Invitations waiting');
      expect(members).toMatch(/Dora Granter\s+dora\.\S+@example\.com\s+May grant access\. Joined/);
      expect(members).toMatch(/Carl Looker\s+carl\.\S+@example\.com\s+Can look only\. Joined/);
      // Each member's buttons name the member to whoever hears them read out.
      await household.getByRole('button', { name: `Let them look only (${granter.name})` }).waitFor();
      await household
        .getByRole('button', { name: `Let them grant and withdraw access (${looker.name})` })
        .waitFor();
      await look(owner.page, 'members', viewport);

      // 3. A request: the owner presses Continue by mistake and releases it; the granting member grants it.
      const first = await companyRequest(cloud, company);
      await owner.page.goto(`/c/${first}`);
      await owner.page.getByRole('button', { name: 'Continue' }).click();
      await owner.page.getByText('Waiting for your answer').waitFor();
      await owner.page.getByRole('button', { name: 'Release this request' }).click();
      await owner.page.getByText('You released this request').waitFor();
      expect((await companyStatus(cloud, company, first)).body.state).toBe('new');
      await look(owner.page, 'released', viewport);

      await granter.page.goto(`/c/${first}`);
      await granter.page.getByRole('button', { name: 'Continue' }).click();
      await granter.page.getByText('Waiting for your answer').waitFor();
      const offered = granter.page.getByRole('group', { name: `What may ${COMPANY} open?` });
      expect(await offered.innerText()).toContain(BARRIER);
      await look(granter.page, 'consent-granter', viewport);
      await offered.getByLabel('Main gate').check();
      await granter.page.getByLabel('Until I withdraw it').check();
      await granter.page.getByRole('button', { name: 'Grant access' }).click();
      await granter.page.getByText('Access granted').waitFor();
      const given = await granter.page.locator('dl.facts').innerText();
      expect(given).toContain(BARRIER);
      expect(given).toContain('Main gate');
      await look(granter.page, 'granted-granter', viewport);
      expect((await companyStatus(cloud, company, first)).body.state).toBe('issued');

      // 4. A second request: the look-only member has no barrier to grant on, and releases it; the owner takes
      // it and passes it to the granting member, who reads who passed it.
      clock.advance(CODE_LOOKUPS.windowMs);
      const second = await companyRequest(cloud, company);
      await looker.page.goto(`/c/${second}`);
      await looker.page.getByRole('button', { name: 'Continue' }).click();
      await looker.page.getByText('Waiting for your answer').waitFor();
      const nothing = await words(looker.page);
      expect(nothing).toContain('You can look, not grant');
      expect(nothing).toContain(
        `You may only look at what ${owner.name} shares with you, so you cannot give ${COMPANY} access to it.`,
      );
      expect(nothing).not.toContain('You have no barrier');
      // Whom it may go to instead: whoever may grant on the barrier they share.
      const instead = looker.page
        .getByRole('region', { name: 'Ask someone else to answer' })
        .getByLabel('Pass this request to');
      expect(await instead.locator('option').allInnerTexts()).toEqual([
        `${owner.name} (${owner.email})`,
        `${granter.name} (${granter.email})`,
      ]);
      expect(await looker.page.getByRole('button', { name: 'Grant access' }).count()).toBe(0);
      expect(await looker.page.getByRole('checkbox').count()).toBe(0);
      await look(looker.page, 'consent-looker', viewport);
      // Not even a grant made up in the page goes through.
      const refused = looker.page.waitForResponse(
        (response) => response.request().method() === 'POST' && response.url().endsWith('/grant'),
      );
      await looker.page.evaluate(
        ({ object }) => {
          const token = document.querySelector<HTMLInputElement>('input[name="_csrf"]')!.value;
          const form = document.createElement('form');
          form.method = 'post';
          form.action = `${location.pathname}/grant`;
          for (const [name, value] of [
            ['_csrf', token],
            ['object', object],
            ['lifetime', 'withdrawn'],
          ]) {
            const field = document.createElement('input');
            field.type = 'hidden';
            field.name = name!;
            field.value = value!;
            form.append(field);
          }
          document.body.append(form);
          form.submit();
        },
        { object: String(barrier.objects[0]!.number_id) },
      );
      expect((await refused).status()).toBe(400);
      await looker.page.getByText('You can look, not grant').waitFor();
      expect(await looker.page.getByRole('button', { name: 'Grant access' }).count()).toBe(0);
      expect((await companyStatus(cloud, company, second)).body.state).toBe('claimed');
      await looker.page.getByRole('button', { name: 'Release this request' }).click();
      await looker.page.getByText('You released this request').waitFor();

      await owner.page.goto(`/c/${second}`);
      await owner.page.getByRole('button', { name: 'Continue' }).click();
      const handover = owner.page.getByRole('region', { name: 'Ask someone else to answer' });
      const to = handover.getByLabel('Pass this request to');
      // Read once the request's page has replaced the one before (allInnerTexts does not wait).
      await expect
        .poll(() => to.locator('option').allInnerTexts())
        .toEqual([`${granter.name} (${granter.email})`]);
      await look(owner.page, 'handover', viewport);
      await to.selectOption({ label: `${granter.name} (${granter.email})` });
      await handover.getByRole('button', { name: 'Pass it on' }).click();
      await owner.page.getByText(`You passed this request to ${granter.name}, who answers it now.`).waitFor();
      expect(await owner.page.getByRole('button', { name: 'Grant access' }).count()).toBe(0);
      expect(await owner.page.locator('.badge').innerText()).toBe('Passed on');
      await look(owner.page, 'passed-on', viewport);

      const passed = notices.filter((notice) => notice.to === granter.email).at(-1)!;
      expect(passed.subject).toBe(`${owner.name} asks you to answer ${COMPANY}'s request`);
      const link = /https?:\/\/\S+\/c\/[0-9A-Z]+/.exec(passed.text)?.[0];
      expect(link, 'the request link in the e-mail').toBeDefined();
      await granter.page.goto(link!);
      await granter.page.getByText(`${owner.name} passed this request to you to answer.`).waitFor();
      expect(await granter.page.getByRole('button', { name: 'Grant access' }).count()).toBe(1);
      await look(granter.page, 'passed-to-granter', viewport);
      expect((await companyStatus(cloud, company, second)).body.state).toBe('claimed');

      // 5. The barrier's history names the member who gave access.
      await owner.page.goto(barrierPath);
      const history = owner.page.getByRole('region', { name: 'History' });
      expect(await history.innerText()).toContain(`${granter.name} gave ${COMPANY} access`);
      expect(await owner.page.locator('li.access', { hasText: COMPANY }).count()).toBe(1);

      // 6. The owner removes the look-only member, whose next visit to the barrier and its journal finds nothing.
      const question = await pressAndConfirm(
        owner.page,
        household.getByRole('button', { name: `Remove ${looker.name}` }),
      );
      expect(question).toBe(`Remove ${looker.name}? They no longer see ${BARRIER}.`);
      await owner.page.getByText(`Removed: they no longer see ${BARRIER}.`).waitFor();
      const left = await household.innerText();
      expect(left).not.toContain(looker.name);
      expect(left).toContain(granter.name);
      await look(owner.page, 'removed', viewport);
      for (const path of [barrierPath, `${barrierPath}/journal`]) {
        const answer = await looker.page.goto(path);
        expect(answer?.status(), path).toBe(404);
        const gone = await words(looker.page);
        expect(gone).toContain('Page not found');
        expect(gone).toContain('No such barrier among yours.');
        expect(gone).not.toContain(BARRIER);
        await look(looker.page, `gone-${path.endsWith('journal') ? 'journal' : 'barrier'}`, viewport);
      }
      await looker.page.goto('/barriers');
      expect(await words(looker.page)).toContain('You have no barrier yet.');
      expect(await looker.page.locator(`a[href="${barrierPath}"]`).count()).toBe(0);

      for (const each of people) {
        expect(each.foreignRequests, each.name).toEqual([]);
        expect(each.errors, each.name).toEqual([]);
        await each.context.close();
      }
    }, 120_000);
  }
});
