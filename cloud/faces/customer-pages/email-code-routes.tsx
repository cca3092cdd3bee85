import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type FieldErrors, parseForm, textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext, safeNext } from '../../foundation/web/web-deps.js';
import { accountForVerifiedEmail } from '../../rules/customers/accounts.js';
import { codeProblem, sendCode, tryCode } from '../../rules/sign-in-codes/send-code.js';
import { displayName, emailField, nextPath, typedCode } from './account-input.js';
import { clientKey, signInAs, withQuery } from './account-session.js';
import { CodePage } from './code-page.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';
import { SignInPage } from './signin-routes.js';

/**
 * Signing in, or up, with a code sent by e-mail (docs/design.md section 10.2). Asking for a code looks the same
 * whether or not the address has an account; entering the right code signs into the account of that address,
 * or makes it (with the name given at sign-up). The address travels from page to page in the query and a
 * hidden field: it is bound to the code, so changing it only makes the code wrong.
 */
const askForm = z.object({ email: emailField, next: nextPath });
const codeQuery = z.object({ email: emailField, next: nextPath, display_name: displayName.optional() });

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
    return reply.redirect(withQuery('/signin/code', { email, next }), 303);
  });

  app.get('/signin/code', async (request, reply) => {
    const query = codeQuery.safeParse(request.query);
    if (!query.success) return reply.redirect('/signin', 303);
    return sendCodePage(request, reply, { ...query.data, next: safeNext(query.data.next) });
  });

  app.post('/signin/code', async (request, reply) => {
    const fields = codeQuery.safeParse(request.body);
    if (!fields.success) return reply.redirect('/signin', 303);
    const carried = { ...fields.data, next: safeNext(fields.data.next) };
    const code = typedCode.safeParse(textField(request.body, 'code'));
    if (!code.success) return sendCodePage(request, reply, carried, code.error.issues[0]!.message, 400);
    const tried = await onForm(reply, ['too_many_attempts'], () =>
      tryCode(deps.ctx, { email: carried.email, code: code.data, clientKey: clientKey(request) }),
    );
    if (!tried.ok) return sendCodePage(request, reply, carried, tried.message, tried.status);
    if (!tried.value.ok) return sendCodePage(request, reply, carried, codeProblem(tried.value), 400);
    const account = await accountForVerifiedEmail(deps.ctx, {
      email: carried.email,
      displayName: carried.display_name,
    });
    await signInAs(deps, request, reply, account.customerId);
    return reply.redirect(carried.next, 303);
  });
}

interface Carried {
  email: string;
  next: string;
  display_name?: string | undefined;
}

function sendCodePage(
  request: FastifyRequest,
  reply: FastifyReply,
  carried: Carried,
  error?: string,
  status = 200,
): FastifyReply {
  const signingUp = carried.display_name !== undefined;
  const rest = { next: carried.next, display_name: carried.display_name };
  return sendPage(
    reply,
    <CodePage
      page={pageContext(request, reply)}
      title="Check your e-mail"
      email={carried.email}
      action="/signin/code"
      carried={rest}
      submitLabel={signingUp ? 'Continue' : 'Sign in'}
      resend={{ action: signingUp ? '/signup/email' : '/signin/email', carried: rest }}
      elsewhere={withQuery(signingUp ? '/signup' : '/signin', { next: carried.next })}
      error={error}
    />,
    status,
  );
}
