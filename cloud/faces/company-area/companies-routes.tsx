import type { FastifyInstance } from 'fastify';
import { parseForm } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext, signedIn, type WebDeps } from '../../foundation/web/web-deps.js';
import { companiesOf, registerCompany } from '../../rules/companies/members.js';
import { actingMember } from '../../rules/member-actions/member-actions.js';
import { CompaniesPage, RegisterPage } from './companies-page.js';
import { companyPath } from './company-frame.js';
import { registrationForm, typedRegistration } from './registration-input.js';

/**
 * Registering a company and finding one's companies (docs/design.md section 11.1). Any signed-in account may
 * register; the company stays `pending`, unable to call the API, until an operator approves it.
 */
export async function companiesRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  const { ctx } = deps;

  app.get('/company', async (request, reply) => {
    const account = signedIn(request, reply);
    if (!account) return reply;
    const memberships = await companiesOf(ctx, account.customerId);
    return sendPage(reply, <CompaniesPage page={pageContext(request, reply)} memberships={memberships} />);
  });

  app.get('/company/new', async (request, reply) => {
    if (!signedIn(request, reply)) return reply;
    return sendPage(reply, <RegisterPage page={pageContext(request, reply)} />);
  });

  app.post('/company/new', async (request, reply) => {
    const account = signedIn(request, reply)!;
    const values = typedRegistration(request.body);
    const again = (errors: Record<string, string>, status: number) =>
      sendPage(
        reply,
        <RegisterPage page={pageContext(request, reply)} values={values} errors={errors} />,
        status,
      );
    const form = parseForm(registrationForm, request.body);
    if (!form.ok) return again(form.errors, 400);
    const registered = await onForm(reply, ['conflict'], () =>
      registerCompany(ctx, actingMember(account), {
        name: form.value.name,
        contactEmail: form.value.contact_email,
        domain: form.value.domain,
      }),
    );
    if (!registered.ok) return again({ name: registered.message }, registered.status);
    return reply.redirect(companyPath(registered.value), 303);
  });
}
