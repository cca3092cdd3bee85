import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { countAttempt } from '../../foundation/web/attempt-limit.js';
import { type FieldErrors, parseForm, textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext, safeNext } from '../../foundation/web/web-deps.js';
import { createAccountWithPasskey } from '../../rules/customers/accounts.js';
import { CEREMONY_ID, CEREMONY_LIMIT } from '../../rules/passkeys/challenges.js';
import { finishRegistration, startRegistration } from '../../rules/passkeys/registration.js';
import { registrationResponse } from '../../rules/passkeys/response-schema.js';
import { emailAddress } from '../../rules/sign-in-codes/email-address.js';
import { sendCode } from '../../rules/sign-in-codes/send-code.js';
import { displayName, emailField, nextPath, readJson } from './account-input.js';
import { clientKey, signInAs, withQuery } from './account-session.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';
import { keepPendingCode } from './pending-code.js';
import { SignUpPage } from './signup-page.js';

/**
 * Creating an account (docs/design.md section 10.2): with a passkey, or with a code sent to an e-mail address;
 * with a code, the account is made only once the code is entered (email-code-routes.tsx). An address given
 * with a passkey is put on the account only once its code is entered too.
 */
const blankIsNone = (value: unknown) =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;
const optionalEmail = z.preprocess(blankIsNone, emailAddress.optional());
const signUpQuery = z.object({ next: nextPath });
const emailForm = z.object({ display_name: displayName, email: emailField, next: nextPath });
const optionsBody = z.object({ display_name: displayName, email: optionalEmail });
const finishBody = z.object({
  ceremony: z.string().regex(CEREMONY_ID, 'Start again: the passkey request is not valid'),
  response: registrationResponse,
  email: optionalEmail,
  next: nextPath,
});

export async function signUpRoutes(app: FastifyInstance, deps: CustomerPagesDeps): Promise<void> {
  app.get('/signup', async (request, reply) => {
    const next = safeNext(signUpQuery.safeParse(request.query).data?.next);
    if (request.customer) return reply.redirect(next, 303);
    return sendPage(reply, <SignUpPage page={pageContext(request, reply)} next={next} />);
  });

  app.post('/signup/email', async (request, reply) => {
    const next = safeNext(textField(request.body, 'next'));
    const values = {
      display_name: textField(request.body, 'display_name'),
      email: textField(request.body, 'email'),
    };
    const again = (errors: FieldErrors, status: number) =>
      sendPage(
        reply,
        <SignUpPage page={pageContext(request, reply)} next={next} values={values} errors={errors} />,
        status,
      );
    const form = parseForm(emailForm, request.body);
    if (!form.ok) return again(form.errors, 400);
    const { email } = form.value;
    const sent = await onForm(reply, ['too_many_attempts', 'email_unavailable'], () =>
      sendCode(deps.ctx, { email, clientKey: clientKey(request) }),
    );
    if (!sent.ok) return again({ email: sent.message }, sent.status);
    await keepPendingCode(deps, reply, { purpose: 'sign-in', email, displayName: form.value.display_name });
    return reply.redirect(withQuery('/signin/code', { next }), 303);
  });

  app.post('/signup/passkey/options', async (request) => {
    const body = readJson(optionsBody, request.body);
    await countAttempt(deps.ctx, CEREMONY_LIMIT, clientKey(request));
    return startRegistration(deps.ctx, { purpose: 'sign_up', displayName: body.display_name });
  });

  app.post('/signup/passkey/verify', async (request, reply) => {
    const body = readJson(finishBody, request.body);
    const { ceremony, credential } = await finishRegistration(deps.ctx, {
      ceremony: body.ceremony,
      purpose: 'sign_up',
      customerId: null,
      response: body.response,
    });
    const customerId = await createAccountWithPasskey(deps.ctx, {
      displayName: ceremony.displayName ?? 'Gatelink customer',
      credential,
    });
    await signInAs(deps, request, reply, customerId);
    const next = safeNext(body.next);
    if (!body.email) return { redirect: next };
    const confirming = { customerId, email: body.email, next };
    return { redirect: await confirmationStep(deps, reply, clientKey(request), confirming) };
  });
}

/**
 * After a passkey sign-up with an address: its code goes out, and the browser goes to enter it, the address
 * waiting in its pending code (pending-code.ts), not in the page's address. When no code can be sent now, the
 * account page says so, and the address can be given again there.
 */
async function confirmationStep(
  deps: CustomerPagesDeps,
  reply: FastifyReply,
  key: string,
  confirming: { customerId: number; email: string; next: string },
): Promise<string> {
  const { customerId, email, next } = confirming;
  try {
    await sendCode(deps.ctx, { email, clientKey: key });
    await keepPendingCode(deps, reply, { purpose: 'confirm', email, customerId });
    return withQuery('/account/email/code', { next });
  } catch (error) {
    if (error instanceof ApiError) return withQuery('/account', { done: 'email-not-sent' });
    throw error;
  }
}
