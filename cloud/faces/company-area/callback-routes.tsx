import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import { saveCallbackAddress } from '../../rules/companies/callback-address.js';
import type { Company } from '../../rules/companies/companies.js';
import { CallbackPage } from './callback-page.js';
import { companyVisit } from './company-access.js';
import type { CompanyAreaDeps } from './company-area-context.js';

/**
 * Setting and removing the callback address (docs/design.md section 11.4); any member may. A refused address
 * is shown on the form with what is wrong, and the one saved before stays.
 */
export async function callbackRoutes(app: FastifyInstance, deps: CompanyAreaDeps): Promise<void> {
  const { ctx } = deps;

  const show = (
    request: FastifyRequest,
    reply: FastifyReply,
    company: Company,
    extra: { notice?: string; value?: string; errors?: FieldErrors } = {},
    status = 200,
  ) =>
    sendPage(
      reply,
      <CallbackPage
        page={pageContext(request, reply)}
        company={company}
        baseUrl={ctx.baseUrl()}
        {...extra}
      />,
      status,
    );

  app.get('/company/:companyId/callback', async (request, reply) => {
    const visit = await companyVisit(deps, request, reply);
    if (!visit) return reply;
    return show(request, reply, visit.membership.company);
  });

  app.post('/company/:companyId/callback', async (request, reply) => {
    const { company } = (await companyVisit(deps, request, reply))!.membership;
    const value = textField(request.body, 'callback_url').trim();
    if (value === '') {
      return show(
        request,
        reply,
        company,
        { value, errors: { callback_url: 'Enter the address, or remove it below.' } },
        400,
      );
    }
    const saved = await onForm(reply, ['callback_refused'], () =>
      saveCallbackAddress(ctx, company.id, value),
    );
    if (!saved.ok)
      return show(request, reply, company, { value, errors: { callback_url: saved.message } }, saved.status);
    return show(
      request,
      reply,
      { ...company, callback_url: saved.value },
      { notice: 'Callback address saved.' },
    );
  });

  app.post('/company/:companyId/callback/remove', async (request, reply) => {
    const { company } = (await companyVisit(deps, request, reply))!.membership;
    await saveCallbackAddress(ctx, company.id, null);
    return show(
      request,
      reply,
      { ...company, callback_url: null },
      {
        notice: 'Callback address removed: events are no longer sent.',
      },
    );
  });
}
