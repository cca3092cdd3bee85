import type { FastifyInstance } from 'fastify';
import { renderToString } from 'preact-render-to-string';
import type { CloudContext } from '../../foundation/context.js';
import { cookiePolicy } from '../../foundation/web/cookies.js';
import { securityHeaders } from '../../foundation/web/security-headers.js';
import { type OpenApiDocument, openApiDocument } from './openapi-document.js';
import { ReferencePage } from './reference-page.js';

/** Public and the same for everyone until the next deployment: caches and proxies may keep it an hour. */
const CACHE_CONTROL = 'public, max-age=3600';

/**
 * The contract as data and as a page (docs/design.md section 1.1; cloud/README.md, "The contract as OpenAPI"):
 * `GET /api/openapi.json` and `GET /api/reference`, both from `openApiDocument`. The page carries the pages'
 * security headers (no inline script or style, nothing from another host) but needs no session or CSRF token.
 */
export async function apiContractRoutes(app: FastifyInstance, options: { ctx: CloudContext }): Promise<void> {
  const { ctx } = options;
  await securityHeaders(app, cookiePolicy(ctx.baseUrl()).secure);
  // The base URL is known once the server listens (cloud/cloud.ts): made on first use, again if it changed.
  let made: { baseUrl: string; document: OpenApiDocument; json: string; page: string } | undefined;
  const current = () => {
    const baseUrl = ctx.baseUrl();
    if (made?.baseUrl !== baseUrl) {
      const document = openApiDocument(baseUrl);
      const page = `<!doctype html>${renderToString(<ReferencePage document={document} />)}`;
      made = { baseUrl, document, json: JSON.stringify(document), page };
    }
    return made;
  };

  app.get('/api/openapi.json', async (_request, reply) =>
    reply.type('application/json').header('cache-control', CACHE_CONTROL).send(current().json),
  );
  app.get('/api/reference', async (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', CACHE_CONTROL).send(current().page),
  );
}
