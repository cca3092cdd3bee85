import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { formText, parseForm, textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { readerZone, sendPage } from '../../foundation/web/page.js';
import { pageContext, safeNext, signedIn } from '../../foundation/web/web-deps.js';
import { isTimeZone } from '../../foundation/zones/wall-clock.js';
import {
  findAccount,
  renameAccount,
  setAccountTimeZone,
  setVerifiedEmail,
} from '../../rules/customers/accounts.js';
import { listPasskeys } from '../../rules/passkeys/passkeys.js';
import { listSubscriptions } from '../../rules/push-subscriptions/subscriptions.js';
import { codeProblem, sendCode, tryCode } from '../../rules/sign-in-codes/send-code.js';
import { displayName, emailField, nextPath, typedCode } from './account-input.js';
import { AccountPage, type AccountPageProps } from './account-page.js';
import { clientKey } from './account-session.js';
import { CodePage } from './code-page.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';
import { forgetPendingCode, keepPendingCode, pendingConfirmation } from './pending-code.js';

/**
 * `/account` (docs/design.md section 10.2): the page, the customer's name, and their e-mail address, which is
 * saved only once the code sent to it is entered. The address waits for its code in this browser's pending
 * code (pending-code.ts), bound to the account, never in the code page's address. The time zone is chosen on
 * the page or proposed once by the pages' script (docs/design.md section 10.1). The passkeys' own forms are in
 * passkey-routes.tsx, the notifications' in notification-routes.tsx.
 */
const NOTICES = {
  'name-saved': 'Your name is saved.',
  'time-zone-saved': 'Your time zone is saved. Times are now shown in it.',
  'email-confirmed': 'Your e-mail address is confirmed. You can now sign in with a code sent to it.',
  'email-not-sent':
    'Your account is ready, but no code could be sent to your e-mail address just now. Give it again below.',
  'passkey-added': 'Passkey added. You can sign in with it from now on.',
  'passkey-renamed': 'Passkey renamed.',
  'passkey-removed': 'Passkey removed. It no longer signs you in.',
  'notifications-on':
    "Notifications are on in this browser. Each barrier's page chooses what you are told of it, under “Tell me”.",
  'notification-renamed': 'Browser renamed.',
  'notification-removed': 'Notifications are off for that browser.',
} as const;

const accountQuery = z.object({ done: z.enum(Object.keys(NOTICES) as [keyof typeof NOTICES]).optional() });
const emailForm = z.object({ email: emailField });
const codeFields = z.object({ next: nextPath });
const ZONE_PROBLEM = 'Choose a time zone from the list.';
/** The form's select, or the script's JSON `{ time_zone, proposed: true }` with the browser's zone. */
const zoneForm = z.object({
  time_zone: formText(z.string().refine(isTimeZone, ZONE_PROBLEM)),
  proposed: z.literal(true).optional(),
});
/** The script's proposal is answered as JSON; the form's choice with a page. */
const zoneProposal = z.object({ proposed: z.literal(true) });

export async function accountRoutes(app: FastifyInstance, deps: CustomerPagesDeps): Promise<void> {
  app.get('/account', async (request, reply) => {
    if (!signedIn(request, reply)) return reply;
    const done = accountQuery.safeParse(request.query).data?.done;
    return sendAccountPage(deps, request, reply, { notice: done ? NOTICES[done] : undefined });
  });

  app.post('/account/name', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const form = parseForm(z.object({ display_name: displayName }), request.body);
    if (!form.ok) {
      const values = { display_name: textField(request.body, 'display_name') };
      return sendAccountPage(deps, request, reply, { errors: form.errors, values }, 400);
    }
    await renameAccount(deps.ctx, customer.customerId, form.value.display_name);
    return reply.redirect('/account?done=name-saved', 303);
  });

  app.post('/account/time-zone', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const form = parseForm(zoneForm, request.body);
    const proposed = zoneProposal.safeParse(request.body).success;
    if (!form.ok && proposed) {
      throw new ApiError('invalid_field', { field: 'time_zone', message: ZONE_PROBLEM });
    }
    if (!form.ok) return sendAccountPage(deps, request, reply, { errors: form.errors }, 400);
    await setAccountTimeZone(deps.ctx, {
      customerId: customer.customerId,
      zone: form.value.time_zone,
      proposed,
    });
    return proposed ? reply.code(204).send() : reply.redirect('/account?done=time-zone-saved', 303);
  });

  app.post('/account/email', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const values = { email: textField(request.body, 'email') };
    const form = parseForm(emailForm, request.body);
    if (!form.ok) return sendAccountPage(deps, request, reply, { errors: form.errors, values }, 400);
    const { email } = form.value;
    const sent = await onForm(reply, ['too_many_attempts', 'email_unavailable'], () =>
      sendCode(deps.ctx, { email, clientKey: clientKey(request), zone: readerZone(request) }),
    );
    if (!sent.ok)
      return sendAccountPage(deps, request, reply, { errors: { email: sent.message }, values }, sent.status);
    await keepPendingCode(deps, reply, { purpose: 'confirm', email, customerId: customer.customerId });
    return reply.redirect('/account/email/code', 303);
  });

  app.get('/account/email/code', async (request, reply) => {
    if (!signedIn(request, reply)) return reply;
    const query = codeFields.safeParse(request.query);
    const email = await pendingConfirmation(deps, request);
    if (!query.success || !email) return reply.redirect('/account', 303);
    return sendConfirmPage(request, reply, { email, next: query.data.next });
  });

  app.post('/account/email/code', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const fields = codeFields.safeParse(request.body);
    const email = await pendingConfirmation(deps, request);
    if (!fields.success || !email) return reply.redirect('/account', 303);
    const { next } = fields.data;
    const shown = { email, next };
    const code = typedCode.safeParse(textField(request.body, 'code'));
    if (!code.success) return sendConfirmPage(request, reply, shown, code.error.issues[0]!.message, 400);
    const tried = await onForm(reply, ['too_many_attempts'], () =>
      tryCode(deps.ctx, { email, code: code.data, clientKey: clientKey(request) }),
    );
    if (!tried.ok) return sendConfirmPage(request, reply, shown, tried.message, tried.status);
    if (!tried.value.ok) return sendConfirmPage(request, reply, shown, codeProblem(tried.value), 400);
    // The code is spent either way: the browser waits for it no longer.
    forgetPendingCode(deps, request, reply);
    const saved = await onForm(reply, ['email_taken'], () =>
      setVerifiedEmail(deps.ctx, customer.customerId, email),
    );
    if (!saved.ok) {
      return sendAccountPage(deps, request, reply, { errors: { email: saved.message } }, saved.status);
    }
    return reply.redirect(next ? safeNext(next) : '/account?done=email-confirmed', 303);
  });
}

/** The account page of the signed-in customer, with whatever the form that was sent needs shown. */
export async function sendAccountPage(
  deps: CustomerPagesDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  extras: Pick<AccountPageProps, 'notice' | 'errors' | 'values'>,
  status = 200,
): Promise<FastifyReply> {
  const customerId = request.customer!.customerId;
  const account = await findAccount(deps.ctx, customerId);
  const [passkeys, devices] = await Promise.all([
    listPasskeys(deps.ctx, customerId),
    listSubscriptions(deps.ctx, customerId),
  ]);
  return sendPage(
    reply,
    <AccountPage
      page={pageContext(request, reply)}
      account={account!}
      passkeys={passkeys}
      notifications={{ devices, vapidPublicKey: deps.ctx.vapid.publicKey }}
      {...extras}
    />,
    status,
  );
}

function sendConfirmPage(
  request: FastifyRequest,
  reply: FastifyReply,
  fields: { email: string; next?: string | undefined },
  error?: string,
  status = 200,
): FastifyReply {
  return sendPage(
    reply,
    <CodePage
      page={pageContext(request, reply)}
      title="Confirm your e-mail address"
      email={fields.email}
      action="/account/email/code"
      carried={{ next: fields.next }}
      submitLabel="Confirm"
      resend={{ action: '/account/email', carried: { email: fields.email } }}
      elsewhere="/account"
      error={error}
    />,
    status,
  );
}
