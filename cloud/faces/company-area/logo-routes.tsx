import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type AttemptLimit, countAttempt } from '../../foundation/web/attempt-limit.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import type { Company } from '../../rules/companies/companies.js';
import { acceptLogo, logoRefused } from '../../rules/logos/logo-image.js';
import { removeCompanyLogo, setCompanyLogo } from '../../rules/logos/logo-store.js';
import { logoForm, logoUploads } from '../../rules/logos/logo-upload.js';
import { actorOf, companyVisit } from './company-access.js';
import type { CompanyAreaDeps } from './company-area-context.js';
import { LogoPage } from './logo-page.js';

/**
 * A company's logo (docs/design.md section 11.3): every member sees it; the owner and developers upload and
 * remove it. The upload is the
 * one multipart form of the service; logo-upload.ts reads it in this plugin's scope only. A refused file
 * re-renders the page with the reason beside the field.
 */
export const LOGO_UPLOADS: AttemptLimit = {
  bucket: 'logo-uploads',
  max: 30,
  windowMs: 3600_000,
  message: (wait) => `Too many uploads in the last hour; try again in ${wait}.`,
};

export async function logoRoutes(app: FastifyInstance, deps: CompanyAreaDeps): Promise<void> {
  const { ctx } = deps;
  await logoUploads(app);

  const show = (
    request: FastifyRequest,
    reply: FastifyReply,
    company: Company,
    extra: { notice?: string; errors?: FieldErrors } = {},
    status = 200,
  ) => sendPage(reply, <LogoPage page={pageContext(request, reply)} company={company} {...extra} />, status);

  app.get('/company/:companyId/logo', async (request, reply) => {
    const visit = await companyVisit(deps, request, reply);
    if (!visit) return reply;
    return show(request, reply, visit.membership.company);
  });

  app.post('/company/:companyId/logo', async (request, reply) => {
    const visit = (await companyVisit(deps, request, reply))!;
    const company = visit.membership.company;
    const saved = await onForm(reply, ['logo_refused', 'too_many_attempts'], async () => {
      const form = logoForm(request);
      if ('problem' in form) throw logoRefused(form.problem);
      await countAttempt(ctx, LOGO_UPLOADS, String(company.id));
      const image = await acceptLogo(
        form.upload ?? { bytes: Buffer.alloc(0), filename: '', contentType: '', tooLarge: false },
      );
      return setCompanyLogo(ctx, company.id, image, actorOf(visit));
    });
    if (!saved.ok) return show(request, reply, company, { errors: { logo: saved.message } }, saved.status);
    return show(request, reply, { ...company, logo_hash: saved.value }, { notice: 'Logo saved.' });
  });

  app.post('/company/:companyId/logo/remove', async (request, reply) => {
    const visit = (await companyVisit(deps, request, reply))!;
    await removeCompanyLogo(ctx, visit.membership.company.id, actorOf(visit));
    return show(
      request,
      reply,
      { ...visit.membership.company, logo_hash: null },
      { notice: 'Logo removed: customers see the first letter of your name again.' },
    );
  });
}
