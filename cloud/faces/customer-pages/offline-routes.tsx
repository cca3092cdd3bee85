import type { FastifyInstance } from 'fastify';
import { Layout, sendPage } from '../../foundation/web/page.js';
import { pageContext, type WebDeps } from '../../foundation/web/web-deps.js';

/**
 * The page the installed application's service worker shows when the network is gone (docs/design.md section
 * 10.1); the manifest and the worker itself are static files (cloud/foundation/web/assets-plugin.ts).
 */
export async function offlineRoutes(app: FastifyInstance, _deps: WebDeps): Promise<void> {
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
