import type { VNode } from 'preact';
import { ErrorSummary } from '../../foundation/web/field-errors.js';
import { Carried, TextField } from '../../foundation/web/form-fields.js';
import { CsrfField, Layout, type PageContext } from '../../foundation/web/page.js';
import { CODE_DIGITS } from '../../rules/sign-in-codes/codes.js';
import { CODE_LIFETIME_MINUTES } from '../../rules/sign-in-codes/send-code.js';

/**
 * The page that asks for the code just e-mailed (docs/design.md section 10.2), for signing in or up and for
 * confirming an address on the account alike: where it was sent, how long it lasts, the field, and the ways on
 * when no e-mail came (a new code, another address).
 */
export interface CodePageProps {
  page: PageContext;
  title: string;
  /** Where the code went, said on the page; the routes read it from the browser's pending code. */
  email: string;
  /** Where the code is posted, with the fields it carries. */
  action: string;
  carried: Readonly<Record<string, string | undefined>>;
  submitLabel: string;
  /** Where "Send a new code" posts, with the fields it carries (the address among them). */
  resend: { action: string; carried: Readonly<Record<string, string | undefined>> };
  /** Where to give another address. */
  elsewhere: string;
  error?: string | undefined;
}

export function CodePage(props: CodePageProps): VNode {
  const errors = props.error ? { code: props.error } : undefined;
  return (
    <Layout title={props.title} page={props.page}>
      <section class="card">
        <ErrorSummary errors={errors} />
        <h1>{props.title}</h1>
        <p>
          We sent a {CODE_DIGITS}-digit code to <strong class="address">{props.email}</strong>. It works once,
          for {CODE_LIFETIME_MINUTES} minutes.
        </p>
        <form method="post" action={props.action} novalidate>
          <CsrfField page={props.page} />
          <Carried fields={props.carried} />
          <TextField
            id="code"
            name="code"
            label="Code from the e-mail"
            inputMode="numeric"
            autocomplete="one-time-code"
            maxLength={12}
            spellcheck={false}
            errors={errors}
          />
          <p class="actions">
            <button type="submit">{props.submitLabel}</button>
          </p>
        </form>
        <h2>No e-mail?</h2>
        <p class="muted">It can take a minute to arrive; look in your spam folder too.</p>
        <form method="post" action={props.resend.action} class="actions">
          <CsrfField page={props.page} />
          <Carried fields={props.resend.carried} />
          <button type="submit" class="secondary">
            Send a new code
          </button>
          <a href={props.elsewhere}>Use another e-mail address</a>
        </form>
      </section>
    </Layout>
  );
}
