import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { MAX_ID } from '../../foundation/http/validation.js';
import { type AttemptLimit, countAttempt } from '../../foundation/web/attempt-limit.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { formText, parseForm, textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import {
  addMember,
  listMembers,
  type Membership,
  removeMember,
  setMemberRole,
  transferOwnership,
} from '../../rules/companies/members.js';
import { emailAddress } from '../../rules/sign-in-codes/email-address.js';
import { actorOf, companyVisit, noSuchCompanyPage, ownerVisit } from './company-access.js';
import type { CompanyAreaContext, CompanyAreaDeps } from './company-area-context.js';
import { companyPath } from './company-frame.js';
import { MembersPage } from './members-page.js';

/**
 * A company's members (docs/design.md section 11.1). Every member sees the list; the owner adds by address and
 * removes. Each addition e-mails the address, so additions are limited per company: an owner cannot make the
 * service send mail without end.
 */
export const MEMBER_ADDITIONS: AttemptLimit = {
  bucket: 'member-additions',
  max: 30,
  windowMs: 24 * 3600_000,
  message: (wait) => `Too many members added today; try again in ${wait}.`,
};

/** The roles an owner gives by form: a developer (stored `member`) or a viewer. */
const givenRole = z.enum(['member', 'viewer']);

const addForm = z.object({
  email: formText(z.string().trim().min(1, 'Enter their e-mail address').pipe(emailAddress)),
  // A form from before roles, or one without the field, adds a developer, as members were.
  role: givenRole.optional().catch(undefined),
});
const roleForm = z.object({ role: givenRole });
const memberParams = z.object({ memberId: z.coerce.number().int().positive().max(MAX_ID) });

export async function membersRoutes(app: FastifyInstance, deps: CompanyAreaDeps): Promise<void> {
  const { ctx } = deps;

  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    membership: Membership,
    extra: { notice?: string; email?: string; errors?: FieldErrors } = {},
    status = 200,
  ) =>
    sendPage(
      reply,
      <MembersPage
        page={pageContext(request, reply)}
        company={membership.company}
        role={membership.role}
        memberId={membership.memberId}
        members={await listMembers(ctx, membership.company.id)}
        {...extra}
      />,
      status,
    );

  app.get('/company/:companyId/members', async (request, reply) => {
    const visit = await companyVisit(deps, request, reply);
    if (!visit) return reply;
    return show(request, reply, visit.membership);
  });

  app.post('/company/:companyId/members', async (request, reply) => {
    const visit = (await ownerVisit(deps, request, reply))!;
    const { membership } = visit;
    const form = parseForm(addForm, request.body);
    const email = textField(request.body, 'email');
    if (!form.ok) return show(request, reply, membership, { email, errors: form.errors }, 400);
    const added = await onForm(reply, ['conflict', 'too_many_attempts'], async () => {
      await countAttempt(ctx, MEMBER_ADDITIONS, String(membership.company.id));
      return addMember(ctx, {
        companyId: membership.company.id,
        email: form.value.email,
        by: actorOf(visit),
        ...(form.value.role ? { role: form.value.role } : {}),
      });
    });
    if (!added.ok)
      return show(request, reply, membership, { email, errors: { email: added.message } }, added.status);
    if (!added.value.added) {
      return show(request, reply, membership, { notice: `${form.value.email} is a member already.` });
    }
    const told = await tellNewMember(ctx, {
      to: form.value.email,
      company: membership.company.name,
      by: visit.account.displayName,
      url: `${ctx.baseUrl()}/company`,
    });
    const notice = told
      ? `${form.value.email} is added; we e-mailed them how to sign in.`
      : `${form.value.email} is added, but the e-mail to them could not be sent: tell them to sign in at ${ctx.baseUrl()}/company with this address.`;
    return show(request, reply, membership, { notice });
  });

  app.post('/company/:companyId/members/:memberId/remove', async (request, reply) => {
    const visit = (await ownerVisit(deps, request, reply))!;
    const params = memberParams.safeParse(request.params);
    if (!params.success) throw noSuchCompanyPage();
    const removed = await removeMember(
      ctx,
      visit.membership.company.id,
      params.data.memberId,
      actorOf(visit),
    );
    if (!removed) throw noSuchCompanyPage();
    return reply.redirect(companyPath(visit.membership.company, 'members'), 303);
  });

  app.post('/company/:companyId/members/:memberId/role', async (request, reply) => {
    const visit = (await ownerVisit(deps, request, reply))!;
    const params = memberParams.safeParse(request.params);
    if (!params.success) throw noSuchCompanyPage();
    // The page's buttons send one of the two; anything else is a forged form.
    const form = roleForm.safeParse(request.body);
    if (!form.success) throw new ApiError('invalid_field', { message: 'A role is developer or viewer.' });
    const changed = await setMemberRole(
      ctx,
      visit.membership.company.id,
      params.data.memberId,
      form.data.role,
      actorOf(visit),
    );
    if (!changed) throw noSuchCompanyPage();
    return reply.redirect(companyPath(visit.membership.company, 'members'), 303);
  });

  app.post('/company/:companyId/members/:memberId/owner', async (request, reply) => {
    const visit = (await ownerVisit(deps, request, reply))!;
    const { membership } = visit;
    const params = memberParams.safeParse(request.params);
    if (!params.success) throw noSuchCompanyPage();
    const transferred = await transferOwnership(ctx, {
      companyId: membership.company.id,
      ownerMemberId: membership.memberId,
      toMemberId: params.data.memberId,
      by: actorOf(visit),
    });
    if (transferred === 'unknown') throw noSuchCompanyPage();
    // The page offers it only to those who signed in; a forged form, or one sent as they left, is told why.
    if (transferred === 'not signed in') {
      throw new ApiError('conflict', {
        message: 'They have not signed in yet: a company passes only to someone who can act for it.',
      });
    }
    const members = await listMembers(ctx, membership.company.id);
    return show(
      request,
      reply,
      { ...membership, role: 'member' },
      {
        notice: `${nameOf(members.find((member) => member.id === params.data.memberId))} owns the company now; you are a developer.`,
      },
    );
  });
}

function nameOf(member: { displayName: string | null; email: string | null } | undefined): string {
  return member?.displayName ?? member?.email ?? 'The member';
}

/** The e-mail to an added member; a failure is told to the owner rather than undoing the addition. */
async function tellNewMember(
  ctx: CompanyAreaContext,
  input: { to: string; company: string; by: string; url: string },
): Promise<boolean> {
  try {
    await ctx.mailer.sendNotice({
      to: input.to,
      subject: `You can now act for ${input.company} on Gatelink`,
      text: [
        `${input.by} added this address to ${input.company}'s members on Gatelink.`,
        '',
        `Sign in at ${input.url} with this address (a code is e-mailed to it), or sign up there if you have no`,
        'Gatelink account yet. If you do not know them, ignore this e-mail: nothing happens unless you sign in.',
      ].join('\n'),
    });
    return true;
  } catch (error) {
    ctx.log.warn({ err: error, email: input.to }, 'member notice could not be e-mailed');
    return false;
  }
}
