import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext, type WebDeps } from '../../foundation/web/web-deps.js';
import { companyJournal } from '../../rules/journal/company-journal.js';
import { ENTRY_OUTCOMES } from '../../rules/journal/outcome-words.js';
import { companyVisit } from './company-access.js';
import { CompanyJournalPage } from './journal-page.js';
import { optionalBefore, optionalChoice, optionalText } from './list-query.js';

/** The company's openings (docs/design.md section 11.4); any member may read them. */
const journalQuery = z.object({
  actor: optionalText(128),
  ref: optionalText(128),
  outcome: optionalChoice(ENTRY_OUTCOMES),
  before: optionalBefore,
});

export async function companyJournalRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  app.get('/company/:companyId/journal', async (request, reply) => {
    const visit = await companyVisit(deps, request, reply);
    if (!visit) return reply;
    const { company } = visit.membership;
    const { before, ...filters } = journalQuery.parse(request.query ?? {});
    const listed = await companyJournal(deps.ctx.db, company.id, { ...filters, before });
    return sendPage(
      reply,
      <CompanyJournalPage
        page={pageContext(request, reply)}
        company={company}
        filters={filters}
        before={before}
        entries={listed.entries}
        older={listed.older}
      />,
    );
  });
}
