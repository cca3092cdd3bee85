import type { VNode } from 'preact';
import { ChangeForm } from '../../foundation/web/change-form.js';
import type { PageContext } from '../../foundation/web/page.js';
import { ShownOnce } from '../../foundation/web/shown-once.js';
import type { Company } from '../../rules/companies/companies.js';
import type { AccessProblem, AccessView } from './access-page.js';
import { companyPath } from './company-frame.js';
import { SecretLine, type SecretLineWords } from './secret-line.js';

/**
 * A company without a domain: its secrets (docs/design.md section 11.2). A new secret is shown on the answer
 * to the form that issued it, and never again; the one it replaces keeps working for 24 hours, unless the
 * company expires it sooner (a leaked one). Rotating and expiring ask first, with the script.
 */
interface SecretAccessProps {
  page: PageContext;
  company: Company;
  view: Extract<AccessView, { kind: 'secret' }>;
  problem: AccessProblem | undefined;
  issued: string | undefined;
}

export function SecretAccess(props: SecretAccessProps): VNode {
  const { company, view } = props;
  const current = view.secrets.some((secret) => secret.retiresAt === null);
  const problem = props.problem?.form === 'secret' ? props.problem.message : undefined;
  return (
    <>
      <p>
        Your company has no domain, so its calls carry your company id, <code>{company.id}</code>, as{' '}
        <code>org_id</code> and a secret as <code>secret</code> in the JSON body.
      </p>
      {props.issued ? <IssuedSecret secret={props.issued} /> : null}
      <section class="card" aria-labelledby="secrets-title">
        <h2 id="secrets-title">Secrets</h2>
        {company.status !== 'approved' ? (
          <p class="notice warn">
            Your company is not approved: you may issue a secret now, but calls with it are refused with{' '}
            <code>org_not_approved</code> until an operator approves your company.
          </p>
        ) : null}
        {view.secrets.length === 0 ? (
          <p>You have no secret yet.</p>
        ) : (
          <ul class="list">
            {view.secrets.map((secret) => (
              <SecretLine
                key={secret.id}
                secret={secret}
                now={view.now}
                page={props.page}
                words={apiSecretWords(company)}
              />
            ))}
          </ul>
        )}
        {problem ? (
          <div class="notice error" role="alert">
            <p>{problem}</p>
          </div>
        ) : null}
        <ChangeForm
          page={props.page}
          action={`${companyPath(company, 'access')}/secret`}
          {...(current
            ? {
                'data-confirm':
                  'Rotate the secret? The new one is shown once; the current one keeps working for 24 hours.',
              }
            : {})}
        >
          <input type="hidden" name="replaces" value={String(view.replaces)} />
          <p class="hint">
            {current
              ? 'A new secret replaces the current one, which keeps working for 24 hours so that you can move your servers over.'
              : 'The secret is shown once, on the next page: have a safe place ready for it.'}
          </p>
          <p class="actions">
            <button type="submit">{current ? 'Rotate the secret' : 'Issue a secret'}</button>
          </p>
        </ChangeForm>
      </section>
    </>
  );
}

function IssuedSecret(props: { secret: string }): VNode {
  return (
    <ShownOnce id="issued" title="Your new secret" label="Secret" secret={props.secret}>
      <p>
        Copy it now and keep it where your servers read it: it is shown only this once, and we keep only a
        hash of it. Anyone who has it can act for your company.
      </p>
    </ShownOnce>
  );
}

/** An API secret's line: its end refuses calls made with it. */
function apiSecretWords(company: Company): SecretLineWords {
  return {
    prefix: 'glsk_',
    made: 'Issued',
    until: 'valid until',
    seconds: false,
    expireAction: (secret) => `${companyPath(company, 'access')}/secret/${secret.id}/expire`,
    confirm: (secret) =>
      `End the old secret …${secret.hint} now? Calls still using it are refused from then on.`,
    hint: 'if it may have leaked, once your servers use the new one',
  };
}
