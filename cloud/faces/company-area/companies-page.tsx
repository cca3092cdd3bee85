import type { VNode } from 'preact';
import { ErrorSummary } from '../../foundation/web/field-errors.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, Layout, type PageContext } from '../../foundation/web/page.js';
import type { Membership } from '../../rules/companies/members.js';
import { companyPath, STATUS_WORDS } from './company-frame.js';
import { RegistrationFields } from './registration-fields.js';
import { ROLE_WORDS } from './role-words.js';

/**
 * `/company` and `/company/new` (docs/design.md section 11.1): the companies an account acts for, and the
 * form that registers a new one.
 */
export function CompaniesPage(props: { page: PageContext; memberships: Membership[] }): VNode {
  return (
    <Layout title="Your companies" page={props.page}>
      <h1>Your companies</h1>
      <section class="card" aria-label="Companies">
        {props.memberships.length === 0 ? (
          <p>
            You do not act for a company yet. Register yours to ask customers for access to their barriers and
            open them through Gatelink's API. If your company is registered already, ask its owner to add your
            confirmed e-mail address as a member.
          </p>
        ) : (
          <ul class="list">
            {props.memberships.map(({ company, role }) => (
              <li key={company.id} class="row">
                <div class="grow">
                  <a href={companyPath(company)}>{company.name}</a>
                  <div class="muted small">{ROLE_WORDS[role].name}</div>
                </div>
                <span class={`badge ${STATUS_WORDS[company.status].tone}`}>
                  {STATUS_WORDS[company.status].text}
                </span>
              </li>
            ))}
          </ul>
        )}
        <p class="actions">
          <a class="button" href="/company/new">
            Register a company
          </a>
        </p>
      </section>
    </Layout>
  );
}

export interface RegistrationValues {
  name?: string;
  contact_email?: string;
  domain?: string;
}

export function RegisterPage(props: {
  page: PageContext;
  values?: RegistrationValues;
  errors?: FieldErrors;
}): VNode {
  const values = props.values ?? {};
  return (
    <Layout title="Register a company" page={props.page}>
      <h1>Register a company</h1>
      <ErrorSummary errors={props.errors} />
      <section class="card">
        <p>
          Tell us who you are. An operator of Gatelink checks every new company before it can call the API;
          meanwhile you can set everything up. You become the company's owner and can add colleagues later.
        </p>
        <form method="post" action="/company/new" novalidate>
          <CsrfField page={props.page} />
          <RegistrationFields
            values={values}
            errors={props.errors}
            hints={{
              name: 'As your customers know it: they see it when you ask for access.',
              contact_email: "Where Gatelink's operators write about your company.",
              domain:
                'With a domain, your calls are signed with a key you publish on it, and customers see the domain confirmed. Without one, you call with an id and a secret. National characters are fine.',
            }}
          />
          <p class="actions">
            <button type="submit">Register</button>
          </p>
        </form>
      </section>
    </Layout>
  );
}
