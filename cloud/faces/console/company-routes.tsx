import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { isPrintableText } from '../../../shared/printable-text.js';
import { MAX_ID } from '../../foundation/http/validation.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { formText, parseForm, textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import { type Company, getCompany } from '../../rules/companies/companies.js';
import { listMembers } from '../../rules/companies/members.js';
import {
  approve,
  domainKeyFingerprint,
  MAX_REASON_LENGTH,
  reject,
  resume,
  suspend,
} from '../../rules/companies/review.js';
import { deliveryLog, endpointStates } from '../../rules/events/delivery-log.js';
import { heldEvents } from '../../rules/events/held-events.js';
import { MEMBER_ACTIONS_SHOWN, memberActions } from '../../rules/member-actions/member-actions.js';
import { companyActions } from '../../rules/operators/actions.js';
import { sandboxUse } from '../../rules/sandbox/sandbox-use.js';
import { CompanyPage, companyUrl } from './company-page.js';
import { type ConsoleDeps, operatorOf } from './console-access.js';

/**
 * A company in the console (docs/design.md section 11.5): its page, and the four changes an operator makes,
 * each a post that answers with the page again: a redirect with what was done, or the page with why not.
 */
const companyParams = z.object({ id: z.coerce.number().int().positive().max(MAX_ID) });
const reasonForm = z.object({
  reason: formText(
    z
      .string()
      .trim()
      .min(1, 'Give the reason: the company reads it')
      .max(MAX_REASON_LENGTH, `Keep the reason to ${MAX_REASON_LENGTH} characters`)
      .refine(isPrintableText, 'Write the reason on one line, without control or invisible characters'),
  ),
});

type Done = 'approved' | 'rejected' | 'suspended' | 'resumed';
const doneQuery = z.object({
  done: z.enum(['approved', 'rejected', 'suspended', 'resumed']).optional().catch(undefined),
});

/** Failures an operator can read and act on, shown on the company's page. */
const SHOWN = ['domain_taken', 'key_fetch_failed', 'conflict'] as const;

function doneNotice(done: Done | undefined, company: Company): string | undefined {
  switch (done) {
    case 'approved': {
      const pinned = domainKeyFingerprint(company.key_pub);
      return pinned
        ? `Approved. The key pinned is ${pinned}.`
        : 'Approved. Its owner issues its secret in its area.';
    }
    case 'rejected':
      return 'Approval refused; the company reads your reason in its area.';
    case 'suspended':
      return 'Suspended: its calls now answer 403 org_not_approved.';
    case 'resumed':
      return 'Resumed: its calls work again.';
    default:
      return undefined;
  }
}

/** The newest attempts an operator sees beside the endpoints' state; the rest is `gatelink-admin events`. */
const CONSOLE_LOG_LINES = 10;

export async function companyRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { ctx } = deps;

  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    id: number,
    extra: { notice?: string; problem?: string; reason?: string; errors?: FieldErrors } = {},
    status = 200,
  ) => {
    const company = await getCompany(ctx, id);
    const [actions, memberRecord, members, endpoints, held, deliveries, sandbox] = await Promise.all([
      companyActions(ctx, id),
      memberActions(ctx, id, { limit: MEMBER_ACTIONS_SHOWN }),
      listMembers(ctx, id),
      endpointStates(ctx, id),
      heldEvents(ctx, id),
      deliveryLog(ctx, id, { limit: CONSOLE_LOG_LINES }),
      sandboxUse(ctx, id),
    ]);
    return sendPage(
      reply,
      <CompanyPage
        page={pageContext(request, reply)}
        operator={operatorOf(request)}
        company={company}
        actions={actions}
        memberActions={memberRecord.actions}
        members={members}
        endpoints={endpoints}
        held={held?.count ?? 0}
        deliveries={deliveries}
        sandbox={sandbox}
        {...extra}
        notice={extra.notice ?? doneNotice(doneQuery.parse(request.query ?? {}).done, company)}
      />,
      status,
    );
  };

  app.get('/console/companies/:id', async (request, reply) => show(request, reply, companyId(request)));

  app.post('/console/companies/:id/approve', async (request, reply) => {
    const id = companyId(request);
    const done = await onForm(reply, SHOWN, () =>
      approve(ctx, id, operatorOf(request), { proofRequired: true }),
    );
    if (!done.ok) return show(request, reply, id, { problem: done.message }, done.status);
    return reply.redirect(`${companyUrl({ id })}?done=approved`, 303);
  });

  const withReason = (action: 'reject' | 'suspend', change: typeof reject, done: Done) =>
    app.post(`/console/companies/:id/${action}`, async (request, reply) => {
      const id = companyId(request);
      const reason = textField(request.body, 'reason');
      const form = parseForm(reasonForm, request.body);
      if (!form.ok) return show(request, reply, id, { reason, errors: form.errors }, 400);
      const changed = await onForm(reply, SHOWN, () =>
        change(ctx, id, operatorOf(request), form.value.reason),
      );
      if (!changed.ok) return show(request, reply, id, { reason, problem: changed.message }, changed.status);
      return reply.redirect(`${companyUrl({ id })}?done=${done}`, 303);
    });
  withReason('reject', reject, 'rejected');
  withReason('suspend', suspend, 'suspended');

  app.post('/console/companies/:id/resume', async (request, reply) => {
    const id = companyId(request);
    const done = await onForm(reply, SHOWN, () => resume(ctx, id, operatorOf(request)));
    if (!done.ok) return show(request, reply, id, { problem: done.message }, done.status);
    return reply.redirect(`${companyUrl({ id })}?done=resumed`, 303);
  });
}

function companyId(request: FastifyRequest): number {
  const params = companyParams.safeParse(request.params);
  if (!params.success) throw new ApiError('not_found', { message: 'There is no company at this address.' });
  return params.data.id;
}
