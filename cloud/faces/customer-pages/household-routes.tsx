import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import type { Session } from '../../foundation/web/sessions.js';
import { signedIn } from '../../foundation/web/web-deps.js';
import { customerBarrier } from '../../rules/devices/customer-barriers.js';
import { NO_SUCH_BARRIER } from '../../rules/households/barrier-roles.js';
import { inviteToBarrier, withdrawInvitation } from '../../rules/households/invitations.js';
import { leaveBarrier, removeMember, setMayGrant } from '../../rules/households/members.js';
import { barrierId, pathNumber } from './barrier-address.js';
import type { BarrierPageProps } from './barrier-page.js';
import type { BarrierView } from './barrier-routes.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';

type ShowBarrier = (
  request: FastifyRequest,
  reply: FastifyReply,
  customer: Session,
  deviceId: string,
  view: BarrierView,
  status?: number,
) => Promise<FastifyReply>;

/**
 * A barrier's household, from its page (docs/design.md section 9.2): the owner invites by e-mail, withdraws an
 * invitation, removes a member or lets them grant or only look; a member leaves. Each is a CSRF-checked form;
 * each names the role it needs, so a member's or a stranger's forged form answers 404 and changes nothing.
 */
export async function householdRoutes(
  app: FastifyInstance,
  deps: CustomerPagesDeps,
  showBarrier: ShowBarrier,
): Promise<void> {
  const { ctx } = deps;

  app.post('/barriers/:id/members', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const deviceId = barrierId(request);
    // A member's or another customer's barrier is 404 before the address is even looked at.
    const barrier = await customerBarrier(ctx.db, customer.customerId, deviceId, 'own');
    const typed = {
      email: textField(request.body, 'email').slice(0, 300),
      mayGrant: mayGrantOf(request.body),
    };
    const sent = await onForm(
      reply,
      ['invalid_field', 'household_full', 'too_many_attempts', 'email_unavailable'],
      () => inviteToBarrier(ctx, { customerId: customer.customerId, deviceId, ...typed }),
    );
    if (!sent.ok) {
      const invite = { ...typed, errors: { email: sent.message } };
      return showBarrier(
        request,
        reply,
        customer,
        deviceId,
        { rename: { name: barrier.name }, invite },
        sent.status,
      );
    }
    return reply.redirect(`/barriers/${deviceId}?invited=1`, 303);
  });

  app.post('/barriers/:id/invitations/:invitationId/withdraw', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const deviceId = barrierId(request);
    const invitationId = pathNumber(request, 'invitationId', NO_SUCH_BARRIER);
    await withdrawInvitation(ctx, { customerId: customer.customerId, deviceId, invitationId });
    return reply.redirect(`/barriers/${deviceId}?invitation_withdrawn=1`, 303);
  });

  app.post('/barriers/:id/members/:memberId/remove', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const deviceId = barrierId(request);
    const memberId = pathNumber(request, 'memberId', NO_SUCH_BARRIER);
    await removeMember(ctx, { customerId: customer.customerId, deviceId, memberId });
    return reply.redirect(`/barriers/${deviceId}?member_removed=1`, 303);
  });

  app.post('/barriers/:id/members/:memberId/may-grant', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const deviceId = barrierId(request);
    const memberId = pathNumber(request, 'memberId', NO_SUCH_BARRIER);
    await setMayGrant(ctx, {
      customerId: customer.customerId,
      deviceId,
      memberId,
      mayGrant: mayGrantOf(request.body),
    });
    return reply.redirect(`/barriers/${deviceId}?member_changed=1`, 303);
  });

  app.post('/barriers/:id/leave', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    await leaveBarrier(ctx.db, { customerId: customer.customerId, deviceId: barrierId(request) });
    return reply.redirect('/barriers?left=1', 303);
  });
}

/** A box ticked, or a hidden field set to 1: anything else is no. */
function mayGrantOf(body: unknown): boolean {
  return textField(body, 'may_grant') === '1';
}

/** A member's or an invitation's id from the path; anything that cannot be one names nothing of anyone's. */
/** What the household's last form did, said at the top of the barrier's page. */
export function householdNotice(request: FastifyRequest): BarrierPageProps['notice'] | undefined {
  for (const kind of [
    'invited',
    'invitation_withdrawn',
    'member_removed',
    'member_changed',
    'joined',
  ] as const) {
    if (textField(request.query, kind) === '1') return { kind };
  }
  return undefined;
}
