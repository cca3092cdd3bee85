import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext, type WebDeps } from '../../foundation/web/web-deps.js';
import { memberActions } from '../../rules/member-actions/member-actions.js';
import { companyActions } from '../../rules/operators/actions.js';
import { ActivityPage } from './activity-page.js';
import { companyVisit } from './company-access.js';
import { optionalBefore } from './list-query.js';

/** Who did what in the company (docs/design.md section 11.8); any member may read it. */
const activityQuery = z.object({ before: optionalBefore });

export async function companyActivityRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  app.get('/company/:companyId/activity', async (request, reply) => {
    const visit = await companyVisit(deps, request, reply);
    if (!visit) return reply;
    const { company } = visit.membership;
    const { before } = activityQuery.parse(request.query ?? {});
    const listed = await memberActions(deps.ctx, company.id, { before });
    const decisions = before === undefined ? await companyActions(deps.ctx, company.id) : [];
    return sendPage(
      reply,
      <ActivityPage
        page={pageContext(request, reply)}
        company={company}
        actions={listed.actions}
        before={before}
        older={listed.older}
        decisions={decisions}
      />,
    );
  });
}
