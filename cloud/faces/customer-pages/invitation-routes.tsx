import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../shared/errors.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext, signedIn, type WebDeps } from '../../foundation/web/web-deps.js';
import { acceptInvitation, type InvitationView, invitationView } from '../../rules/households/invitations.js';
import { InvitationPage, type InvitationReader } from './invitation-page.js';

/** A token as invitations make them: 32 random bytes in base64url. Anything else names no invitation. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * An invitation's link and its Accept (docs/design.md section 9.2). The GET changes nothing, with or without a
 * session, since messengers fetch links to preview them; a browser not signed in is offered sign-in and sign-up
 * with the link as `next`, which carries the token and never the address. Accept is a CSRF-checked POST: only
 * the invited address's account is made a member; anyone else gets the page for what the link is, and nothing
 * is written.
 */
export async function invitationRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  const { ctx } = deps;

  app.get('/invitations/:token', async (request, reply) => show(request, reply, await viewOf(request)));

  app.post('/invitations/:token/accept', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const { token } = request.params as { token: string };
    if (!TOKEN.test(token)) return show(request, reply, { kind: 'unknown' });
    try {
      const { deviceId } = await acceptInvitation(ctx, { token, customerId: customer.customerId });
      return reply.redirect(`/barriers/${deviceId}?joined=1`, 303);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (!['not_found', 'invalid_state', 'forbidden', 'conflict'].includes(error.code)) throw error;
      return show(request, reply, await viewOf(request), error.status);
    }
  });

  async function viewOf(request: FastifyRequest): Promise<InvitationView> {
    const { token } = request.params as { token: string };
    if (!TOKEN.test(token)) return { kind: 'unknown' };
    return invitationView(ctx.db, { token, now: ctx.clock.now() });
  }

  async function show(
    request: FastifyRequest,
    reply: FastifyReply,
    view: InvitationView,
    status?: number,
  ): Promise<FastifyReply> {
    const reader = await readerOf(request, view);
    const { token } = request.params as { token: string };
    return sendPage(
      reply,
      <InvitationPage
        page={pageContext(request, reply)}
        view={view}
        reader={reader}
        path={`/invitations/${encodeURIComponent(token)}`}
      />,
      status ?? (view.kind === 'unknown' ? 404 : 200),
    );
  }

  /** Who reads the invitation: the invited account only when its confirmed address is the invited one. */
  async function readerOf(request: FastifyRequest, view: InvitationView): Promise<InvitationReader> {
    const customerId = request.customer?.customerId;
    if (customerId === undefined || view.kind === 'unknown') return 'signed-out';
    const [account, device] = await Promise.all([
      ctx.db
        .selectFrom('customers')
        .select(['email', 'email_verified_at'])
        .where('id', '=', customerId)
        .executeTakeFirstOrThrow(),
      ctx.db
        .selectFrom('devices')
        .select('customer_id')
        .where('id', '=', view.invitation.deviceId)
        .executeTakeFirst(),
    ]);
    if (device?.customer_id === customerId) return 'owner';
    const invited = account.email === view.invitation.email && account.email_verified_at !== null;
    return invited ? 'invited' : 'other-address';
  }
}
