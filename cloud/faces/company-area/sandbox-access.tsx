import type { VNode } from 'preact';
import { ChangeForm } from '../../foundation/web/change-form.js';
import type { PageContext } from '../../foundation/web/page.js';
import { ShownOnce } from '../../foundation/web/shown-once.js';
import type { SecretListing } from '../../rules/call-auth/secrets-list.js';
import type { Company } from '../../rules/companies/companies.js';
import { companyPath } from './company-frame.js';

/**
 * The API access page's part on the sandbox (docs/design.md section 11.9; cloud/README.md, "The sandbox"): how a
 * call reaches it, and for a company without a domain its sandbox secret, shown once when made. Open to a company
 * still waiting for approval: that is when a developer wants it most.
 */
export type SandboxView = { kind: 'domain' } | { kind: 'secret'; secrets: SecretListing[]; replaces: number };

export function SandboxAccess(props: {
  page: PageContext;
  company: Company;
  baseUrl: string;
  view: SandboxView;
  problem: string | undefined;
  issued: string | undefined;
}): VNode {
  const { company, view } = props;
  return (
    <section class="card" aria-labelledby="sandbox-title">
      <h2 id="sandbox-title">Sandbox</h2>
      <p>
        Try every call before a customer, and before we approve your company: add <code>"sandbox": true</code>{' '}
        to the body. Such a call reaches only your sandbox, a simulated customer with a barrier we run for
        you, and every answer and event of it says <code>"sandbox": true</code>. Move the customer and the
        barrier with <code>a=sandbox</code>: grant a request, withdraw a key, or make the next openings fail
        as real ones can.
      </p>
      {view.kind === 'domain' ? (
        <>
          <p>
            Your key signs sandbox calls as it signs live ones
            {company.status === 'approved' ? '.' : ': until we approve you, the key you proved to hold.'}
          </p>
          <pre class="secret">
            {`npm run company -- request --sandbox --url ${props.baseUrl} --key company-key.json`}
          </pre>
        </>
      ) : (
        <SandboxSecret {...props} view={view} />
      )}
    </section>
  );
}

function SandboxSecret(props: {
  page: PageContext;
  company: Company;
  view: Extract<SandboxView, { kind: 'secret' }>;
  problem: string | undefined;
  issued: string | undefined;
}): VNode {
  const { company, view } = props;
  const current = view.secrets[0];
  return (
    <>
      <p>
        Sandbox calls carry your company id as <code>org_id</code> and a sandbox secret, which reaches nothing
        live, as <code>secret</code>.
      </p>
      {props.issued ? (
        <ShownOnce
          id="sandbox-issued"
          title="Your new sandbox secret"
          label="Sandbox secret"
          secret={props.issued}
        >
          <p>Copy it now: it is shown only this once. It reaches your sandbox and nothing else.</p>
        </ShownOnce>
      ) : null}
      <p>
        {current ? (
          <>
            In use: <code>glsb_…{current.hint}</code>
          </>
        ) : (
          'You have no sandbox secret yet.'
        )}
      </p>
      {props.problem ? (
        <div class="notice error" role="alert">
          <p>{props.problem}</p>
        </div>
      ) : null}
      <ChangeForm
        page={props.page}
        action={`${companyPath(company, 'access')}/sandbox-secret`}
        {...(current
          ? { 'data-confirm': 'Make a new sandbox secret? The current one stops working at once.' }
          : {})}
      >
        <input type="hidden" name="replaces" value={String(view.replaces)} />
        <p class="actions">
          <button type="submit" class="secondary">
            {current ? 'Make a new sandbox secret' : 'Make a sandbox secret'}
          </button>
        </p>
      </ChangeForm>
    </>
  );
}
