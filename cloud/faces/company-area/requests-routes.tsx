import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext, type WebDeps } from '../../foundation/web/web-deps.js';
import { companyRequests, REQUEST_STATES } from '../../rules/requests/company-requests.js';
import { companyVisit } from './company-access.js';
import { optionalBefore, optionalChoice, optionalText } from './list-query.js';
import { RequestsPage } from './requests-page.js';

/** The company's requests (docs/design.md section 11.4); any member may read them. */
const requestsQuery = z.object({
  state: optionalChoice(REQUEST_STATES),
  ref: optionalText(128),
  before: optionalBefore,
});

export async function requestsRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  app.get('/company/:companyId/requests', async (request, reply) => {
    const visit = await companyVisit(deps, request, reply);
    if (!visit) return reply;
    const { company } = visit.membership;
    const query = requestsQuery.parse(request.query ?? {});
    const listed = await companyRequests(
      deps.ctx.db,
      company.id,
      {
        state: query.state,
        refPrefix: query.ref,
        before: query.before,
      },
      deps.ctx.clock.now(),
    );
    return sendPage(
      reply,
      <RequestsPage
        page={pageContext(request, reply)}
        company={company}
        filters={{ state: query.state, ref: query.ref }}
        before={query.before}
        rows={listed.rows}
        older={listed.older}
      />,
    );
  });
}
