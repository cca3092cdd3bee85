import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { countAttempt } from '../../foundation/web/attempt-limit.js';
import { ErrorSummary } from '../../foundation/web/field-errors.js';
import { Carried, TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, Layout, type PageContext, sendPage } from '../../foundation/web/page.js';
import { pageContext, safeNext, type WebDeps } from '../../foundation/web/web-deps.js';
import { finishSignIn, startSignIn } from '../../rules/passkeys/authentication.js';
import { CEREMONY_ID, CEREMONY_LIMIT } from '../../rules/passkeys/challenges.js';
import { authenticationResponse } from '../../rules/passkeys/response-schema.js';
import { nextPath, readJson } from './account-input.js';
import { clientKey, signInAs, withQuery } from './account-session.js';
import { PASSKEY_SCRIPTS, PasskeyButton, PasskeyNotes } from './passkey-button.js';

/**
 * Signing in (docs/design.md section 10.2): with a passkey, the two calls of its ceremony; or, where this
 * browser has none, with a code sent by e-mail (email-code-routes.tsx). A browser already signed in goes on to
 * where it was going.
 */
const signInQuery = z.object({ next: nextPath, signed_out: z.string().optional() });
const finishBody = z.object({
  ceremony: z.string().regex(CEREMONY_ID, 'Start again: the passkey request is not valid'),
  response: authenticationResponse,
  next: nextPath,
});

export async function signInRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  app.get('/signin', async (request, reply) => {
    const query = signInQuery.safeParse(request.query);
    const next = safeNext(query.data?.next);
    if (request.customer) return reply.redirect(next, 303);
    return sendPage(
      reply,
      <SignInPage page={pageContext(request, reply)} next={next} signedOut={!!query.data?.signed_out} />,
    );
  });

  app.post('/signin/passkey/options', async (request) => {
    await countAttempt(deps.ctx, CEREMONY_LIMIT, clientKey(request));
    return startSignIn(deps.ctx);
  });

  app.post('/signin/passkey/verify', async (request, reply) => {
    const body = readJson(finishBody, request.body);
    const customerId = await finishSignIn(deps.ctx, { ceremony: body.ceremony, response: body.response });
    await signInAs(deps, request, reply, customerId);
    return { redirect: safeNext(body.next) };
  });
}

export function SignInPage(props: {
  page: PageContext;
  next: string;
  email?: string;
  errors?: FieldErrors;
  signedOut?: boolean;
}) {
  return (
    <Layout title="Sign in" page={props.page} scripts={PASSKEY_SCRIPTS}>
      <section class="card">
        {props.signedOut ? (
          <p class="notice ok" role="status">
            You are signed out.
          </p>
        ) : null}
        <ErrorSummary errors={props.errors} />
        <h1>Sign in</h1>
        <p>Use the passkey you made for Gatelink on this device, or one on your phone.</p>
        <p class="actions">
          <PasskeyButton
            ceremony="sign-in"
            label="Sign in with a passkey"
            start="/signin/passkey/options"
            finish="/signin/passkey/verify"
            statusId="signin-passkey-status"
            next={props.next}
          />
        </p>
        <PasskeyNotes statusId="signin-passkey-status" otherwise="Sign in with an e-mail code below." />
        <h2>No passkey here?</h2>
        <form method="post" action="/signin/email" novalidate>
          <CsrfField page={props.page} />
          <Carried fields={{ next: props.next }} />
          <TextField
            id="email"
            name="email"
            type="email"
            label="E-mail address"
            hint="We e-mail you a code to sign in with."
            autocomplete="email"
            spellcheck={false}
            value={props.email}
            errors={props.errors}
          />
          <p class="actions">
            <button type="submit" class="secondary">
              Send me a code
            </button>
          </p>
        </form>
      </section>
      <p class="center">
        New to Gatelink? <a href={withQuery('/signup', { next: props.next })}>Create an account</a>
      </p>
    </Layout>
  );
}
