import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { Layout, sendPage } from '../web/page.js';
import { pageContext, type WebDeps } from './web-deps.js';

const ASSETS = join(dirname(fileURLToPath(import.meta.url)), '..', 'web', 'assets');
const SERVICE_WORKER = readFileSync(join(ASSETS, 'service-worker.js'), 'utf8');

/**
 * What makes the application installable (docs/design.md section 10): the manifest, the service worker (served
 * from the root so that its scope is the whole site) and the page it shows when the network is gone.
 */
export async function pwaRoutes(app: FastifyInstance, _deps: WebDeps): Promise<void> {
  app.get('/manifest.webmanifest', async (_request, reply) =>
    reply
      .type('application/manifest+json; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .send(MANIFEST),
  );
  app.get('/service-worker.js', async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(SERVICE_WORKER),
  );
  app.get('/offline', async (request, reply) =>
    sendPage(
      reply,
      <Layout title="You are offline" page={pageContext(request, reply)}>
        <section class="card">
          <h1>You are offline</h1>
          <p>
            Gatelink needs the network to show your barriers and their journal. Check your connection, then
            reload this page.
          </p>
        </section>
      </Layout>,
    ),
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
