import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import type { CloudContext } from '../context.js';
import { cookiePolicy } from './cookies.js';
import { securityHeaders } from './security-headers.js';

const ASSETS = join(dirname(fileURLToPath(import.meta.url)), 'assets');
const WEBAUTHN_BROWSER = join(
  dirname(fileURLToPath(import.meta.resolve('@simplewebauthn/browser'))),
  '..',
  'dist',
  'bundle',
);
const SERVICE_WORKER = readFileSync(join(ASSETS, 'service-worker.js'), 'utf8');

/**
 * The pages' static files (docs/design.md section 10.1): stylesheet, scripts, icons, the passkey library from our
 * own origin, the manifest and the service worker (served from the root so that its scope is the whole site).
 * Registered beside the pages, not under them: a file needs no session, cookie or CSRF token, so a browser
 * fetching the stylesheet costs no database lookup.
 */
export async function webAssets(app: FastifyInstance, options: { ctx: CloudContext }): Promise<void> {
  await securityHeaders(app, cookiePolicy(options.ctx.baseUrl()).secure);
  await app.register(fastifyStatic, {
    root: ASSETS,
    prefix: '/assets/',
    maxAge: 3600 * 1000,
    index: false,
    wildcard: false,
  });
  await app.register(fastifyStatic, {
    root: WEBAUTHN_BROWSER,
    prefix: '/assets/vendor/simplewebauthn/',
    decorateReply: false,
    maxAge: 3600 * 1000,
    index: false,
    wildcard: false,
    allowedPath: (path) => path === '/index.umd.min.js',
  });
  app.get('/manifest.webmanifest', async (_request, reply) =>
    reply
      .type('application/manifest+json; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .send(MANIFEST),
  );
  app.get('/service-worker.js', async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(SERVICE_WORKER),
  );
}

const MANIFEST = JSON.stringify({
  name: 'Gatelink',
  short_name: 'Gatelink',
  description: 'Let the companies you choose open your gate, and see every opening.',
  id: '/',
  start_url: '/barriers',
  scope: '/',
  display: 'standalone',
  background_color: '#f8fafc',
  theme_color: '#1d4ed8',
  icons: [
    { src: '/assets/icon.svg', sizes: 'any', type: 'image/svg+xml' },
    { src: '/assets/icon-192.png', sizes: '192x192', type: 'image/png' },
    { src: '/assets/icon-512.png', sizes: '512x512', type: 'image/png' },
    { src: '/assets/icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
  ],
});
