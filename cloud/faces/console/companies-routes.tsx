import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { z } from 'zod';
import type { CloudContext } from '../../foundation/context.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import type { Company } from '../../rules/companies/companies.js';
import { CompaniesPage, type StatusFilter } from './companies-page.js';
import { type ConsoleDeps, operatorOf } from './console-access.js';

/** The list of companies (docs/design.md section 11.5); an unknown filter shows them all. */
const listQuery = z.object({
  status: z.enum(['pending', 'approved', 'rejected', 'suspended', 'all']).catch('all').default('all'),
});

/** More than an operator reads on one page; the waiting ones come first, so none is hidden behind the rest. */
const LIST_LIMIT = 500;

export async function companiesRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  app.get('/console', async (request, reply) => {
    const { status } = listQuery.parse(request.query ?? {});
    return sendPage(
      reply,
      <CompaniesPage
        page={pageContext(request, reply)}
        operator={operatorOf(request)}
        filter={status}
        companies={await companiesFor(deps.ctx, status)}
      />,
    );
  });
}

async function companiesFor(ctx: CloudContext, status: StatusFilter): Promise<Company[]> {
  let query = ctx.db
    .selectFrom('companies')
    .selectAll()
    .orderBy(sql`case when status = 'pending' then 0 else 1 end`)
    .orderBy('id')
    .limit(LIST_LIMIT);
  if (status !== 'all') query = query.where('status', '=', status);
  return query.execute();
}
