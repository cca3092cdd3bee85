import type { VNode } from 'preact';
import type { MemberRole } from '../../foundation/db/schema.js';
import { ChangeForm } from '../../foundation/web/change-form.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import type { PageContext } from '../../foundation/web/page.js';
import type { Company } from '../../rules/companies/companies.js';
import { displayDomain } from '../../rules/companies/domains.js';
import type { RegistrationValues } from './companies-page.js';
import { CompanyFrame, companyPath } from './company-frame.js';
import { RegistrationFields } from './registration-fields.js';

/**
 * `/company/<id>` (docs/design.md section 11.1): where the company stands, said plainly, and what happens next;
 * the operators' reason when they refused or suspended it; its details, which it may correct until approved.
 */
export interface OverviewProps {
  page: PageContext;
  company: Company;
  role: MemberRole;
  editable: boolean;
  notice?: string | undefined;
  values?: RegistrationValues;
  errors?: FieldErrors;
}

export function OverviewPage(props: OverviewProps): VNode {
  const { company } = props;
  return (
    <CompanyFrame
      page={props.page}
      company={company}
      section="overview"
      title="Overview"
      notice={props.notice}
      errors={props.errors}
    >
      <section class="card" aria-labelledby="standing-title">
        <h3 id="standing-title">{STANDING_TITLE[company.status]}</h3>
        <Standing {...props} />
      </section>
      <Details {...props} />
    </CompanyFrame>
  );
}

const STANDING_TITLE: Record<Company['status'], string> = {
  pending: 'What happens next',
  approved: 'Your company can call the API',
  rejected: 'An operator did not approve your company',
  suspended: 'Your company is suspended',
};

function Standing(props: OverviewProps): VNode {
  const { company } = props;
  switch (company.status) {
    case 'pending':
      return <PendingSteps company={company} />;
    case 'approved':
      return (
        <>
          <p>
            Ask customers for access with the API's <code>request</code> call: each gets a link and QR code to
            open. Once they grant it, open their barrier with <code>open</code>, naming the employee.
          </p>
          <p>
            <a href={companyPath(company, 'access')}>Your API access</a> shows the first call to make.{' '}
            <a href={companyPath(company, 'requests')}>Requests</a> and{' '}
            <a href={companyPath(company, 'journal')}>Openings</a> show what happened since.
          </p>
        </>
      );
    case 'rejected':
      return (
        <>
          <Reason company={company} />
          <p>Correct your details below if the reason asks for it, then ask the operators again.</p>
          {props.role === 'owner' ? (
            <ChangeForm page={props.page} action={`${companyPath(company)}/ask-again`} class="actions">
              <button type="submit">Ask again</button>
            </ChangeForm>
          ) : (
            <p class="muted">The company's owner can ask again.</p>
          )}
        </>
      );
    case 'suspended':
      return (
        <>
          <Reason company={company} />
          <p>
            Your calls are refused with <code>org_not_approved</code> until an operator resumes your company.
            Write to Gatelink's operators from {company.contact_email ?? 'your contact address'} about it.
          </p>
        </>
      );
  }
}

function Reason(props: { company: Company }): VNode {
  return (
    <blockquote class="reason">{props.company.status_reason ?? 'The operator gave no reason.'}</blockquote>
  );
}

/** A pending company's steps, each marked done once the service has seen it done. */
function PendingSteps(props: { company: Company }): VNode {
  const { company } = props;
  const access = companyPath(company, 'access');
  const steps: { done: boolean; text: VNode }[] = company.domain
    ? [
        {
          done: company.key_published !== null,
          text: (
            <>
              Make a key pair and publish it on {displayDomain(company.domain)}:{' '}
              <a href={access}>API access</a> shows the command and checks the file.
            </>
          ),
        },
        {
          done: company.key_published !== null && company.key_proven === company.key_published,
          text: (
            <>
              Prove you hold the key, on <a href={access}>API access</a>.
            </>
          ),
        },
      ]
    : [
        {
          done: false,
          text: (
            <>
              Issue your secret on <a href={access}>API access</a>; it works from approval on.
            </>
          ),
        },
      ];
  steps.push({
    done: company.logo_hash !== null,
    text: (
      <>
        Optional: <a href={companyPath(company, 'logo')}>upload your logo</a>, which customers see when you
        ask.
      </>
    ),
  });
  return (
    <>
      <p>
        An operator of Gatelink checks every new company before it can call the API. Until then, calls are
        refused with <code>org_not_approved</code>. You will see the answer here, with the reason if it is no.
      </p>
      <ol class="steps">
        {steps.map((step, index) => (
          <li key={index} class={step.done ? 'done' : undefined}>
            {step.done ? <span class="badge ok">Done</span> : null} {step.text}
          </li>
        ))}
      </ol>
      <p class="muted small">
        {company.domain
          ? 'The operators approve a domain company once it has proved that it holds the key on its domain.'
          : 'The operators approve once they have checked who you are.'}
      </p>
    </>
  );
}

function Details(props: OverviewProps): VNode {
  const { company } = props;
  // A viewer reads the details as facts: the form would be theirs to send.
  if (!props.editable || props.page.lookOnly) {
    return (
      <section class="card" aria-labelledby="details-title">
        <h3 id="details-title">Details</h3>
        <dl class="facts">
          <dt>Name</dt>
          <dd>{company.name}</dd>
          <dt>Contact e-mail</dt>
          <dd>{company.contact_email ?? 'none'}</dd>
          <dt>Domain</dt>
          <dd>{company.domain ? displayDomain(company.domain) : 'none: calls use an id and a secret'}</dd>
          <dt>Company id</dt>
          <dd>{company.id}</dd>
        </dl>
      </section>
    );
  }
  const values = props.values ?? {
    name: company.name,
    contact_email: company.contact_email ?? '',
    domain: company.domain ? displayDomain(company.domain) : '',
  };
  return (
    <section class="card" aria-labelledby="details-title">
      <h3 id="details-title">Details</h3>
      <p class="muted small">You can correct these until an operator approves the company.</p>
      <ChangeForm page={props.page} action={`${companyPath(company)}/details`} novalidate>
        <RegistrationFields
          values={values}
          errors={props.errors}
          hints={{ domain: 'Changing it forgets the key checked for the old one.' }}
        />
        <p class="actions">
          <button type="submit" class="secondary">
            Save details
          </button>
        </p>
      </ChangeForm>
    </section>
  );
}
