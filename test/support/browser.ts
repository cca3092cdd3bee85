import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * Real headless Chromium for the customer application's browser suites: Debian's chromium (never a
 * downloaded browser), its virtual authenticator for passkeys, axe-core for accessibility, and screenshots of
 * every page at a phone's and a desktop's size under test/artifacts/ (ignored by git), to look at as a
 * customer would.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/**
 * A browser story's own ceiling: a page at a time, each with its screenshots and axe, takes 10 to 15 s on an idle
 * 2-core machine and more on a busy one, past the 20 s every other test has (vitest.config.ts).
 */
export const BROWSER_STORY_TIMEOUT_MS = 90_000;

export const chromiumMissing = existsSync(CHROMIUM)
  ? undefined
  : `Chromium is not installed at ${CHROMIUM}: apt-get install chromium (CI installs it)`;

export const VIEWPORTS = {
  phone: { width: 360, height: 740 },
  desktop: { width: 1280, height: 800 },
} as const;

export type ViewportName = keyof typeof VIEWPORTS;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-gpu',
      '--no-first-run',
    ],
  });
}

/**
 * A fresh browser profile at one of the two sizes. Every request to a host other than the cloud's is
 * recorded, so that a suite can assert that no page reached a third party.
 */
export async function newProfile(
  browser: Browser,
  baseUrl: string,
  viewport: ViewportName = 'phone',
): Promise<{ context: BrowserContext; page: Page; foreignRequests: string[] }> {
  const context = await browser.newContext({ viewport: VIEWPORTS[viewport], baseURL: baseUrl });
  const foreignRequests: string[] = [];
  const origin = new URL(baseUrl).origin;
  context.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith('data:')) foreignRequests.push(url);
  });
  const page = await context.newPage();
  return { context, page, foreignRequests };
}

/**
 * An authenticator that holds resident keys and verifies its user: the platform's own by default, as a phone
 * or laptop with a passkey has, and every WebAuthn ceremony of the page is answered by it. Chromium allows one
 * platform (`internal`) authenticator per page; a second one can be a security key (`usb`), which the browser
 * asks when the first cannot answer (it already holds an excluded credential). Returns a way to list its
 * credentials, and to take it away as a device that is gone.
 */
export async function addVirtualAuthenticator(
  page: Page,
  options: { transport?: 'internal' | 'usb' } = {},
): Promise<{ credentialCount(): Promise<number>; remove(): Promise<void> }> {
  const session = await page.context().newCDPSession(page);
  await session.send('WebAuthn.enable');
  const { authenticatorId } = await session.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: options.transport ?? 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return {
    async credentialCount() {
      const { credentials } = await session.send('WebAuthn.getCredentials', { authenticatorId });
      return credentials.length;
    },
    async remove() {
      await session.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
    },
  };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, which the page's CSP does not govern)
 * and returns the serious and critical violations.
 */
export async function seriousAccessibilityViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: RawViolation[] }> } }).axe;
    interface RawViolation {
      id: string;
      impact: string | null;
      help: string;
      nodes: unknown[];
    }
    const result = await axe.run();
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.length,
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts');

/** Saves the page as test/artifacts/<name>-<viewport>.png (the whole page, not only what is in view). */
export async function screenshot(page: Page, name: string, viewport: ViewportName): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}-${viewport}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Checks the phone's page with axe and saves it, then opens the same address in a desktop window with the same
 * cookies and does the same: every page of a story is looked at at both sizes.
 */
export async function shootBothSizes(
  phone: { context: BrowserContext; page: Page },
  desktop: BrowserContext,
  name: string,
): Promise<void> {
  const page = phone.page;
  expect(await seriousAccessibilityViolations(page), `${name} at phone size`).toEqual([]);
  await screenshot(page, name, 'phone');
  await desktop.clearCookies();
  await desktop.addCookies(await phone.context.cookies());
  const wide = await desktop.newPage();
  await wide.goto(page.url());
  expect(await seriousAccessibilityViolations(wide), `${name} at desktop size`).toEqual([]);
  await screenshot(wide, name, 'desktop');
  await wide.close();
}
