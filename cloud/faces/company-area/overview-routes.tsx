import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { parseForm } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import type { Company } from '../../rules/companies/companies.js';
import type { Membership } from '../../rules/companies/members.js';
import { askAgain, mayEditRegistration, updateRegistration } from '../../rules/companies/registration.js';
import type { RegistrationValues } from './companies-page.js';
import { actorOf, companyVisit, ownerVisit } from './company-access.js';
import type { CompanyAreaDeps } from './company-area-context.js';
import { OverviewPage } from './overview-page.js';
import { registrationForm, typedRegistration } from './registration-input.js';

/**
 * A company's overview (docs/design.md section 11.1): its standing and next steps, its details (which any
 * member may correct until approval), and asking again after a refusal (the owner).
 */
export async function overviewRoutes(app: FastifyInstance, deps: CompanyAreaDeps): Promise<void> {
  const { ctx } = deps;

  const show = (
    request: FastifyRequest,
    reply: FastifyReply,
    membership: Membership,
    extra: { company?: Company; notice?: string; values?: RegistrationValues; errors?: FieldErrors } = {},
    status = 200,
  ) => {
    const company = extra.company ?? membership.company;
    return sendPage(
      reply,
      <OverviewPage
        page={pageContext(request, reply)}
        company={company}
        role={membership.role}
        editable={mayEditRegistration(company)}
        notice={extra.notice}
        values={extra.values}
        errors={extra.errors}
      />,
      status,
    );
  };

  app.get('/company/:companyId', async (request, reply) => {
    const visit = await companyVisit(deps, request, reply);
    if (!visit) return reply;
    return show(request, reply, visit.membership);
  });

  app.post('/company/:companyId/details', async (request, reply) => {
    const visit = (await companyVisit(deps, request, reply))!;
    const values = typedRegistration(request.body);
    const form = parseForm(registrationForm, request.body);
    if (!form.ok) return show(request, reply, visit.membership, { values, errors: form.errors }, 400);
    const saved = await onForm(reply, ['conflict'], () =>
      updateRegistration(
        ctx,
        visit.membership.company,
        {
          name: form.value.name,
          contactEmail: form.value.contact_email,
          domain: form.value.domain,
        },
        actorOf(visit),
      ),
    );
    if (!saved.ok)
      return show(request, reply, visit.membership, { errors: { name: saved.message } }, saved.status);
    return show(request, reply, visit.membership, { company: saved.value, notice: 'Details saved.' });
  });

  app.post('/company/:companyId/ask-again', async (request, reply) => {
    const visit = (await ownerVisit(deps, request, reply))!;
    const asked = await onForm(reply, ['conflict'], () =>
      askAgain(ctx, visit.membership.company, actorOf(visit)),
    );
    if (!asked.ok)
      return show(request, reply, visit.membership, { errors: { form: asked.message } }, asked.status);
    return show(request, reply, visit.membership, {
      company: asked.value,
      notice: 'Asked again: an operator will look at your company once more.',
    });
  });
}
