import type { VNode } from 'preact';
import { ChangeForm } from '../../foundation/web/change-form.js';
import { ErrorSummary } from '../../foundation/web/field-errors.js';
import { TextField } from '../../foundation/web/form-fields.js';
import type { PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { Company } from '../../rules/companies/companies.js';
import { toUnicodeDomain } from '../../rules/companies/domains.js';
import { fingerprintOf } from '../../rules/domain-keys/published-key.js';
import type { AccessProblem, AccessView } from './access-page.js';
import { companyPath } from './company-frame.js';

/**
 * A domain company's key (docs/design.md section 11.2). Before approval: make a key pair, publish it, check it,
 * prove holding it; an operator then approves and pins the proven key. Once approved: the pinned key, its
 * last confirmation, and the same three steps to move to a new key, which the proof confirms.
 */
interface KeyAccessProps {
  page: PageContext;
  company: Company;
  view: Extract<AccessView, { kind: 'domain' }>;
  problem: AccessProblem | undefined;
}

export function KeyAccess(props: KeyAccessProps): VNode {
  const { company } = props;
  const admitted =
    company.key_pub !== null && (company.status === 'approved' || company.status === 'suspended');
  return (
    <>
      <p>
        Your calls are signed with your domain's key: <strong>{toUnicodeDomain(props.view.domain)}</strong>{' '}
        publishes its public half, and only you hold the private half.
      </p>
      {admitted ? <PinnedKey company={company} /> : null}
      <KeySteps {...props} admitted={admitted} />
    </>
  );
}

function PinnedKey(props: { company: Company }): VNode {
  const { company } = props;
  const seen = company.key_seen_other;
  return (
    <section class="card" aria-labelledby="pinned-title">
      <h2 id="pinned-title">Your key</h2>
      {seen !== null ? (
        <div class="notice warn" role="alert">
          <p>
            <strong>Your domain now publishes another key</strong>
            {fingerprintOf(seen) ? ` (fingerprint ${fingerprintOf(seen)})` : ', which is not a usable key'}.
            Calls are refused with <code>key_changed</code> until you confirm it below.
          </p>
          <p>
            If you did not change your key, someone else may control your domain or its web server: do not
            confirm; publish your own key again and check the key file.
          </p>
        </div>
      ) : null}
      <dl class="facts">
        <dt>Fingerprint</dt>
        <dd>
          <code>{fingerprintOf(company.key_pub!)}</code>
        </dd>
        <dt>Last confirmed</dt>
        <dd>{company.key_confirmed_at ? <Moment date={company.key_confirmed_at} /> : 'not yet'}</dd>
        {company.key_check_error ? (
          <>
            <dt>Last check</dt>
            <dd>{company.key_check_error}</dd>
          </>
        ) : null}
      </dl>
      <p class="muted small">
        We fetch your key file at least hourly. If it cannot be fetched for 24 hours, calls are refused with{' '}
        <code>key_unavailable</code>.
      </p>
    </section>
  );
}

function KeySteps(props: KeyAccessProps & { admitted: boolean }): VNode {
  const { company, admitted, problem } = props;
  const domain = props.view.domain;
  const out = admitted ? 'new-key.json' : 'company-key.json';
  return (
    <section class="card" aria-labelledby="steps-title">
      <h2 id="steps-title">{admitted ? 'Change your key' : 'Set up your key'}</h2>
      <h3>1. Make a key pair</h3>
      <p>On a computer you trust, in a copy of Gatelink, run:</p>
      <pre class="secret">{`npm run company -- keygen --domain ${domain}${admitted ? ` --out ${out}` : ''}`}</pre>
      <p class="muted small">
        It writes the private key to {out}, readable by you only; keep it secret and keep a backup.
      </p>
      <h3>2. Publish the key file</h3>
      <p>
        Publish what keygen printed at <code>{`https://${domain}/.well-known/service.json`}</code>, then check
        it:
      </p>
      <PublishedKey company={company} />
      <CheckForm page={props.page} company={company} problem={problem} />
      <h3>3. Prove you hold the key</h3>
      <ProofStep {...props} out={out} />
    </section>
  );
}

function CheckForm(props: {
  page: PageContext;
  company: Company;
  problem: AccessProblem | undefined;
}): VNode {
  const failed = props.problem?.form === 'check' ? props.problem.message : undefined;
  return (
    <>
      {failed ? (
        <div class="notice error" role="alert">
          <p>The key file could not be used: {failed}</p>
        </div>
      ) : null}
      <ChangeForm
        page={props.page}
        action={`${companyPath(props.company, 'access')}/key/check`}
        class="actions"
      >
        <button type="submit" class="secondary">
          Check my key file
        </button>
      </ChangeForm>
    </>
  );
}

function PublishedKey(props: { company: Company }): VNode | null {
  const { key_published: key, key_published_at: at } = props.company;
  if (!key || !at) return null;
  return (
    <p>
      Your domain publishes the key with fingerprint <code>{fingerprintOf(key)}</code> (checked{' '}
      <Moment date={at} />
      ).
    </p>
  );
}

function ProofStep(props: KeyAccessProps & { admitted: boolean; out: string }): VNode {
  const { company, admitted } = props;
  const challenge = props.view.challenge;
  const key = company.key_published;
  if (!challenge || !key) return <p class="muted">Check your key file first.</p>;
  if (admitted && key === company.key_pub) {
    return (
      <p class="muted">
        {company.key_seen_other
          ? 'Check your key file to see the key it holds now.'
          : 'Your domain publishes the key already pinned: there is nothing to confirm.'}
      </p>
    );
  }
  if (!admitted && company.key_proven === key) {
    return (
      <p>
        <span class="badge ok">Proven</span> You proved you hold this key.{' '}
        {company.status === 'pending'
          ? 'An operator will approve your company with it; until then calls are refused with org_not_approved.'
          : ''}
      </p>
    );
  }
  const form = admitted ? 'rotation' : 'proof';
  const problem = props.problem?.form === form ? props.problem : undefined;
  const errors = problem ? { signature: problem.message } : undefined;
  return (
    <>
      <p>Sign this text with your key:</p>
      <pre class="secret">{challenge}</pre>
      <p>by running:</p>
      <pre class="secret">{`npm run company -- prove --key ${props.out} --text '${challenge}'`}</pre>
      <ErrorSummary errors={errors} />
      <ChangeForm page={props.page} action={`${companyPath(company, 'access')}/key/${form}`} novalidate>
        <TextField
          id="signature"
          name="signature"
          label="Signature"
          hint="What the prove command printed: one line of base64."
          value={problem?.signature}
          errors={errors}
          maxLength={200}
          spellcheck={false}
        />
        <p class="actions">
          <button type="submit">{admitted ? 'Confirm the new key' : 'Send the proof'}</button>
        </p>
      </ChangeForm>
    </>
  );
}
