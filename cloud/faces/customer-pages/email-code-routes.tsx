import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type FieldErrors, parseForm, textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext, safeNext } from '../../foundation/web/web-deps.js';
import { accountForVerifiedEmail } from '../../rules/customers/accounts.js';
import { codeProblem, sendCode, tryCode } from '../../rules/sign-in-codes/send-code.js';
import { emailField, nextPath, typedCode } from './account-input.js';
import { clientKey, signInAs, withQuery } from './account-session.js';
import { CodePage } from './code-page.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';
import { keepPendingCode, type PendingCode, pendingSignIn } from './pending-code.js';
import { SignInPage } from './signin-routes.js';

/**
 * Signing in, or up, with a code sent by e-mail (docs/design.md section 10.2). Asking for a code looks the same
 * whether or not the address has an account; entering the right code signs into the account of that address,
 * or makes it (with the name given at sign-up). The address, and the name at sign-up, wait in this browser's
 * sealed cookie (pending-code.ts), never in an address: the code page's holds only where to go next.
 */
const askForm = z.object({ email: emailField, next: nextPath });

export async function emailCodeRoutes(app: FastifyInstance, deps: CustomerPagesDeps): Promise<void> {
  app.post('/signin/email', async (request, reply) => {
    const next = safeNext(textField(request.body, 'next'));
    const typed = textField(request.body, 'email');
    const again = (errors: FieldErrors, status: number) =>
      sendPage(
        reply,
        <SignInPage page={pageContext(request, reply)} next={next} email={typed} errors={errors} />,
        status,
      );
    const form = parseForm(askForm, request.body);
    if (!form.ok) return again(form.errors, 400);
    const { email } = form.value;
    const sent = await onForm(reply, ['too_many_attempts', 'email_unavailable'], () =>
      sendCode(deps.ctx, { email, clientKey: clientKey(request) }),
    );
    if (!sent.ok) return again({ email: sent.message }, sent.status);
    await keepPendingCode(deps, reply, { purpose: 'sign-in', email });
    return reply.redirect(withQuery('/signin/code', { next }), 303);
  });

  // With no code waiting on this browser (none asked for, or asked for over an hour ago), there is nothing to
  // enter: the browser starts again at signing in.
  app.get('/signin/code', async (request, reply) => {
    const next = safeNext(textField(request.query, 'next'));
    const pending = await pendingSignIn(deps, request);
    if (!pending) return reply.redirect(withQuery('/signin', { next }), 303);
    return sendCodePage(request, reply, { pending, next });
  });

  app.post('/signin/code', async (request, reply) => {
    const next = safeNext(textField(request.body, 'next'));
    const pending = await pendingSignIn(deps, request);
    if (!pending) return reply.redirect(withQuery('/signin', { next }), 303);
    const carried = { pending, next };
    const code = typedCode.safeParse(textField(request.body, 'code'));
    if (!code.success) return sendCodePage(request, reply, carried, code.error.issues[0]!.message, 400);
    const tried = await onForm(reply, ['too_many_attempts'], () =>
      tryCode(deps.ctx, { email: pending.email, code: code.data, clientKey: clientKey(request) }),
    );
    if (!tried.ok) return sendCodePage(request, reply, carried, tried.message, tried.status);
    if (!tried.value.ok) return sendCodePage(request, reply, carried, codeProblem(tried.value), 400);
    const account = await accountForVerifiedEmail(deps.ctx, {
      email: pending.email,
      displayName: pending.displayName,
    });
    await signInAs(deps, request, reply, account.customerId);
    return reply.redirect(next, 303);
  });
}

interface Carried {
  pending: Extract<PendingCode, { purpose: 'sign-in' }>;
  next: string;
}

function sendCodePage(
  request: FastifyRequest,
  reply: FastifyReply,
  { pending, next }: Carried,
  error?: string,
  status = 200,
): FastifyReply {
  const signingUp = pending.displayName !== undefined;
  // A new code is asked for as the first one was, the form's fields posted again (never in an address).
  const asked = { email: pending.email, display_name: pending.displayName, next };
  return sendPage(
    reply,
    <CodePage
      page={pageContext(request, reply)}
      title="Check your e-mail"
      email={pending.email}
      action="/signin/code"
      carried={{ next }}
      submitLabel={signingUp ? 'Continue' : 'Sign in'}
      resend={{ action: signingUp ? '/signup/email' : '/signin/email', carried: asked }}
      elsewhere={withQuery(signingUp ? '/signup' : '/signin', { next })}
      error={error}
    />,
    status,
  );
}
