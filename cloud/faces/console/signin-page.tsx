import type { VNode } from 'preact';
import { describedBy, ErrorSummary, FieldError } from '../../foundation/web/field-errors.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, Layout, type PageContext } from '../../foundation/web/page.js';

/**
 * `/console/signin` (docs/design.md section 11.5): the operator token, typed as a password, starts a console
 * session of 12 hours. Operators with their own account need no token: they sign in at /signin.
 */
export function SigninPage(props: { page: PageContext; errors?: FieldErrors | undefined }): VNode {
  return (
    <Layout title="Operator console sign-in" page={props.page}>
      <h1>Operator console</h1>
      <ErrorSummary errors={props.errors} />
      <section class="card">
        <form method="post" action="/console/signin" novalidate>
          <CsrfField page={props.page} />
          <label for="token">Operator token</label>
          <p class="hint" id="token-hint">
            The cloud's OPERATOR_TOKEN, or the contents of operator-token in its data folder. The console
            stays signed in for 12 hours at most.
          </p>
          <FieldError errors={props.errors} field="token" />
          <input
            type="password"
            id="token"
            name="token"
            autocomplete="current-password"
            aria-describedby={describedBy('token', props.errors)}
            aria-invalid={props.errors?.token ? 'true' : undefined}
          />
          <p class="actions">
            <button type="submit">Sign in to the console</button>
          </p>
        </form>
      </section>
      <OperatorAccountNote />
    </Layout>
  );
}

/** What anyone who is not an operator sees of a console page: 403, and how operators get in. */
export function RefusedPage(props: { page: PageContext }): VNode {
  return (
    <Layout title="Operators only" page={props.page}>
      <section class="card">
        <h1>Operators only</h1>
        <p>
          This is Gatelink's operator console.{' '}
          {props.page.customer
            ? 'Your account has no operator rights.'
            : 'Sign in with the operator token or an operator account.'}
        </p>
        <p class="actions">
          <a class="button" href="/console/signin">
            Sign in with the operator token
          </a>
        </p>
      </section>
      <OperatorAccountNote />
    </Layout>
  );
}

function OperatorAccountNote(): VNode {
  return (
    <p class="muted small">
      An operator with their own Gatelink account <a href="/signin?next=%2Fconsole">signs in</a> with their
      passkey or an e-mail code, then opens /console.
    </p>
  );
}
