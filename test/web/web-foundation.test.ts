import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * What every customer page stands on (docs/design.md section 10): security headers and a CSP without inline
 * script, first-party assets, the installable application's manifest and service worker, pages for errors, and
 * CSRF protection on every state change.
 */
let database: TestDatabase;
let cloud: TestCloud;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

describe('the pages', () => {
  it('carry a Content-Security-Policy that allows no inline script or style and no other host', async () => {
    const page = await new BrowserClient(cloud.app).get('/');
    expect(page.status).toBe(200);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/);
    expect(page.html).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
  });

  it('serve the stylesheet, scripts, icons, manifest and service worker from our own origin', async () => {
    const client = new BrowserClient(cloud.app);
    for (const path of [
      '/assets/app.css',
      '/assets/app.js',
      '/assets/icon.svg',
      '/assets/icon-192.png',
      '/assets/icon-512.png',
      '/assets/vendor/simplewebauthn/index.umd.min.js',
      '/service-worker.js',
      '/offline',
    ]) {
      expect((await client.get(path)).status, path).toBe(200);
    }
    const manifest = JSON.parse((await client.get('/manifest.webmanifest')).html);
    expect(manifest.start_url).toBe('/barriers');
    expect(manifest.icons.map((icon: { sizes: string }) => icon.sizes)).toContain('512x512');
  });

  it('answer a browser with a page that says a page does not exist, and an API client with JSON', async () => {
    const client = new BrowserClient(cloud.app);
    const page = await client.get('/no/such/page');
    expect(page.status).toBe(404);
    expect(page.headers['content-type']).toContain('text/html');
    expect(visibleText(page.html)).toContain('There is no page at this address.');
    const api = await cloud.app.inject({ method: 'GET', url: '/no/such/page' });
    expect(api.statusCode).toBe(404);
    expect(api.json().error).toBe('not_found');
  });
});

describe('CSRF protection', () => {
  it('[attack:web.csrf-cross-site-form] refuses a state change posted from another site, or without the token', async () => {
    const customer = await createCustomer(cloud.ctx, { displayName: 'Csrf Target' });
    const client = await BrowserClient.signedIn(cloud, customer.id);
    await client.get('/offline');
    const crossSite = await client.post('/signout', {}, { origin: 'https://evil.example' });
    expect(crossSite.status).toBe(403);
    expect(visibleText(crossSite.html)).toContain('came from another site');
    const noToken = await client.post('/signout', { _csrf: '' });
    expect(noToken.status).toBe(403);
    const forged = await client.post('/signout', { _csrf: 'forged-token' });
    expect(forged.status).toBe(403);
  });
});
