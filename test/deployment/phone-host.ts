import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Browser, chromium } from 'playwright-core';
import { addVirtualAuthenticator, CHROMIUM } from '../support/browser.js';
import { waitFor } from '../support/wait-for.js';
import type { Host } from './network.js';
import { SERVER_NAME } from './server-host.js';

/**
 * The phone: Debian's Chromium inside the phone's namespace, trusting the server's CA as a phone that had it
 * installed would. The trust is real: the CA goes into the NSS database of the browser's profile home
 * ($HOME/.pki/nssdb, made with certutil), which Chromium on Linux reads, so that a certificate error (which
 * WebAuthn refuses) would be one. No flag to ignore certificate errors is given.
 */
const run = promisify(execFile);
export const CERTUTIL = '/usr/bin/certutil';

export function phoneMissing(): string | undefined {
  if (!existsSync(CHROMIUM)) return `Chromium is not installed at ${CHROMIUM}: apt-get install chromium`;
  if (!existsSync(CERTUTIL)) return `certutil is not installed at ${CERTUTIL}: apt-get install libnss3-tools`;
  return undefined;
}

export async function launchPhone(host: Host, options: { home: string; caFile: string }): Promise<Browser> {
  const nssdb = join(options.home, '.pki', 'nssdb');
  mkdirSync(nssdb, { recursive: true });
  await run(CERTUTIL, ['-d', `sql:${nssdb}`, '-N', '--empty-password']);
  await run(CERTUTIL, ['-d', `sql:${nssdb}`, '-A', '-t', 'C,,', '-n', 'Lab server CA', '-i', options.caFile]);
  // Playwright talks to the browser over pipes, which cross namespaces; the browser's sockets are the phone's.
  const launcher = join(options.home, 'chromium-in-phone');
  writeFileSync(launcher, `#!/bin/sh\nexec ip netns exec ${host.namespace} ${CHROMIUM} "$@"\n`);
  chmodSync(launcher, 0o755);
  return chromium.launch({
    executablePath: launcher,
    env: { ...process.env, HOME: options.home },
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

export const SITE = `https://${SERVER_NAME}`;

/**
 * The customer's part, as the customer story takes it (test/e2e/customer-story.test.ts): opens the company's
 * request link, signs up with a passkey of the phone's authenticator, adds the controller by its pairing code,
 * and grants its gate. Resolves once `granted` holds.
 */
export async function customerGrants(
  browser: Browser,
  options: { requestUrl: string; code: string; pairingCode: string; customer: string; barrier: string },
  granted: () => Promise<boolean>,
): Promise<void> {
  const context = await browser.newContext({ baseURL: SITE, viewport: { width: 360, height: 740 } });
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  await addVirtualAuthenticator(page);
  await page.goto(options.requestUrl);
  await page.locator('a[href^="/signup"]').first().click();
  await page.locator('input[name="display_name"]').fill(options.customer);
  await page.locator('button[data-passkey]').click();
  await page.waitForURL((url) => url.pathname === `/c/${options.code}`);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.locator('a[href^="/barriers?next="]').first().click();
  await page.locator('input[name="code"]').fill(options.pairingCode);
  await page.locator('input[name="name"]').fill(options.barrier);
  await page.getByRole('button', { name: 'Add barrier' }).click();
  await page.waitForURL((url) => url.pathname === `/c/${options.code}`);
  await page.getByLabel('Main gate').check();
  await page.getByRole('button', { name: 'Grant access' }).click();
  await waitFor(granted, 'the company to see the grant', 30_000);
  await context.close();
}
