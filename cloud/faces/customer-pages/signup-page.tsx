import type { VNode } from 'preact';
import { ErrorSummary } from '../../foundation/web/field-errors.js';
import { Carried, TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, Layout, type PageContext } from '../../foundation/web/page.js';
import { MAX_DISPLAY_NAME_LENGTH } from '../../rules/customers/accounts.js';
import { MAX_EMAIL_LENGTH } from '../../rules/sign-in-codes/email-address.js';
import { withQuery } from './account-session.js';
import { PASSKEY_SCRIPTS, PasskeyButton, PasskeyNotes } from './passkey-button.js';

/**
 * `/signup` (docs/design.md section 10.2): one form, two ways to finish it. "Create with a passkey" (script)
 * needs only the name; "Sign up with an e-mail code" works everywhere, script or not, and needs the address.
 * The e-mail button is the form's submit button, so Enter in a field takes the way that needs no script.
 */
export function SignUpPage(props: {
  page: PageContext;
  next: string;
  values?: { display_name: string; email: string };
  errors?: FieldErrors;
}): VNode {
  return (
    <Layout title="Create your account" page={props.page} scripts={PASSKEY_SCRIPTS}>
      <section class="card">
        <ErrorSummary errors={props.errors} />
        <h1>Create your account</h1>
        <form method="post" action="/signup/email" novalidate>
          <CsrfField page={props.page} />
          <Carried fields={{ next: props.next }} />
          <TextField
            id="display_name"
            name="display_name"
            label="Your name"
            hint="How Gatelink addresses you. You can change it later."
            autocomplete="name"
            maxLength={MAX_DISPLAY_NAME_LENGTH}
            value={props.values?.display_name}
            errors={props.errors}
          />
          <TextField
            id="email"
            name="email"
            type="email"
            label="E-mail address (optional with a passkey)"
            hint="With it you can also sign in with a code on a device that has no passkey."
            autocomplete="email"
            maxLength={MAX_EMAIL_LENGTH}
            spellcheck={false}
            value={props.values?.email}
            errors={props.errors}
          />
          <div class="actions">
            <PasskeyButton
              ceremony="sign-up"
              label="Create with a passkey"
              start="/signup/passkey/options"
              finish="/signup/passkey/verify"
              statusId="signup-passkey-status"
            />
            <button type="submit" class="secondary">
              Sign up with an e-mail code
            </button>
          </div>
          <PasskeyNotes statusId="signup-passkey-status" otherwise="Sign up with an e-mail code instead." />
        </form>
      </section>
      <p class="center">
        Already have an account? <a href={withQuery('/signin', { next: props.next })}>Sign in</a>
      </p>
    </Layout>
  );
}
