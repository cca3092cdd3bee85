import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sandboxBodySchema } from '../../../shared/company-api/sandbox-calls.js';
import { textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import type { Company } from '../../rules/companies/companies.js';
import { listEndpoints } from '../../rules/events/endpoints.js';
import { companyJournal } from '../../rules/journal/company-journal.js';
import { moveSandbox, sandboxState } from '../../rules/sandbox/sandbox-customer.js';
import { sandboxCompany } from '../../rules/sandbox/sandbox-world.js';
import { actorOf, companyVisit } from './company-access.js';
import type { CompanyAreaDeps } from './company-area-context.js';
import { companyPath } from './company-frame.js';
import { sandboxSide } from './event-side.js';
import { SandboxPage } from './sandbox-page.js';

/** The sandbox's openings the page shows; the rest go on in `listen` and the events. */
const OPENINGS_SHOWN = 10;

/**
 * The company area's sandbox page (docs/design.md section 11.9): each move posts, goes through the rule
 * `a=sandbox` uses, and redirects to the page with what it did, or shows the page with why not.
 */
export async function sandboxRoutes(app: FastifyInstance, deps: CompanyAreaDeps): Promise<void> {
  const { ctx } = deps;
  const DONE: Record<string, string> = {
    granted: 'Granted: the key is in status, and request.issued is sent.',
    withdrawn: 'Withdrawn: the next open with that key answers revoked.',
    outcome: 'Saved: the next openings come to what you chose.',
  };

  app.get('/company/:companyId/sandbox', async (request, reply) => {
    const visit = await companyVisit(deps, request, reply);
    if (!visit) return reply;
    const done = DONE[textField(request.query, 'done')];
    return show(request, reply, visit.membership.company, { notice: done });
  });

  /** A move's form, read as the body of `a=sandbox` and checked by its schema, so both refuse alike. */
  const move = (path: 'grant' | 'withdraw' | 'outcome', done: string) =>
    app.post(`/company/:companyId/sandbox/${path}`, async (request, reply) => {
      const visit = (await companyVisit(deps, request, reply))!;
      const { company } = visit.membership;
      const form = (name: string) => textField(request.body, name);
      const call = sandboxBodySchema.safeParse({
        do: path,
        code: form('code'),
        key_ref: Number(form('key_ref')),
        outcome: form('outcome'),
      });
      if (!call.success)
        return show(request, reply, company, { problem: 'That is not a move of the sandbox.' }, 400);
      const moved = await onForm(reply, ['not_found', 'invalid_state', 'org_not_approved'], async () =>
        moveSandbox(ctx, await sandboxCompany(ctx, company), call.data, actorOf(visit)),
      );
      if (!moved.ok) return show(request, reply, company, { problem: moved.message }, moved.status);
      return reply.redirect(`${companyPath(company, 'sandbox')}?done=${done}`, 303);
    });
  move('grant', 'granted');
  move('withdraw', 'withdrawn');
  move('outcome', 'outcome');

  async function show(
    request: FastifyRequest,
    reply: FastifyReply,
    company: Company,
    view: { notice?: string | undefined; problem?: string },
    status = 200,
  ): Promise<FastifyReply> {
    const [state, side] = await Promise.all([sandboxState(ctx, company.id), sandboxSide(ctx, company)]);
    const openings = state
      ? (await companyJournal(ctx.db, state.sandboxId, {})).entries.slice(0, OPENINGS_SHOWN)
      : [];
    const endpoints = side ? await listEndpoints(ctx.db, side.holder.id) : [];
    return sendPage(
      reply,
      <SandboxPage
        page={pageContext(request, reply)}
        company={company}
        state={state}
        openings={openings}
        endpoints={endpoints}
        {...view}
      />,
      status,
    );
  }
}
