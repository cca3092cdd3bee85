import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import { findCompanies, SEARCH_MAX_LENGTH } from '../../rules/companies/company-search.js';
import { endpointHealth } from '../../rules/events/endpoint-health.js';
import { CompaniesPage } from './companies-page.js';
import { type ConsoleDeps, operatorOf } from './console-access.js';

/** The list of companies (docs/design.md section 11.5); an unknown filter shows them all, a long search its start. */
const listQuery = z.object({
  status: z.enum(['pending', 'approved', 'rejected', 'suspended', 'all']).catch('all').default('all'),
  q: z
    .string()
    .catch('')
    .default('')
    .transform((text) => text.slice(0, SEARCH_MAX_LENGTH)),
});

export async function companiesRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  app.get('/console', async (request, reply) => {
    const { status, q } = listQuery.parse(request.query ?? {});
    const companies = await findCompanies(deps.ctx, { status, text: q });
    const endpoints = await endpointHealth(
      deps.ctx.db,
      companies.map((company) => company.id),
    );
    return sendPage(
      reply,
      <CompaniesPage
        page={pageContext(request, reply)}
        operator={operatorOf(request)}
        filter={status}
        search={q}
        companies={companies}
        endpoints={endpoints}
      />,
    );
  });
}
