import type { VNode } from 'preact';
import type { PageContext } from '../../foundation/web/page.js';
import type { SecretListing } from '../../rules/call-auth/secrets-list.js';
import type { Company } from '../../rules/companies/companies.js';
import { CompanyFrame } from './company-frame.js';
import { KeyAccess } from './key-access.js';
import { SandboxAccess, type SandboxView } from './sandbox-access.js';
import { SecretAccess } from './secret-access.js';

/**
 * `/company/<id>/access` (docs/design.md section 11.2): how the company's calls are authenticated, what to do
 * next, and a first call to try with what the page knows. A domain company's part is key-access.tsx, a
 * secret company's secret-access.tsx.
 */
export type AccessView =
  | { kind: 'domain'; domain: string; challenge: string | null }
  | { kind: 'secret'; secrets: SecretListing[]; replaces: number; now: Date };

/** What went wrong with a form, said beside it; `signature` is what was pasted, shown again. */
export interface AccessProblem {
  form: 'check' | 'proof' | 'rotation' | 'secret' | 'sandbox-secret';
  message: string;
  signature?: string;
}

export interface AccessPageProps {
  page: PageContext;
  company: Company;
  baseUrl: string;
  view: AccessView;
  sandbox: SandboxView;
  /** What the last form did (`?done=`). */
  done?: string | undefined;
  problem?: AccessProblem | undefined;
  /** A secret just issued: shown on this answer only. */
  issued?: string | undefined;
  /** A sandbox secret just made: shown on this answer only. */
  sandboxIssued?: string | undefined;
}

const DONE: Record<string, string> = {
  checked: 'Key file checked: its key is shown below.',
  proven: 'Proof accepted: you hold the key your domain publishes.',
  rotated: 'New key confirmed: your calls are verified with it from now on.',
  expired:
    'The old secret no longer works: calls with it are refused from now on (on every server within 10 seconds).',
};

export function AccessPage(props: AccessPageProps): VNode {
  const { company, view } = props;
  const done = props.done ? DONE[props.done] : undefined;
  return (
    <CompanyFrame page={props.page} company={company} section="access" title="API access">
      {done ? (
        <div class="notice ok" role="status">
          {done}
        </div>
      ) : null}
      {view.kind === 'domain' ? (
        <KeyAccess page={props.page} company={company} view={view} problem={props.problem} />
      ) : (
        <SecretAccess
          page={props.page}
          company={company}
          view={view}
          problem={props.problem}
          issued={props.issued}
        />
      )}
      <FirstCall company={company} baseUrl={props.baseUrl} view={view} />
      <SandboxAccess
        page={props.page}
        company={company}
        baseUrl={props.baseUrl}
        view={props.sandbox}
        problem={props.problem?.form === 'sandbox-secret' ? props.problem.message : undefined}
        issued={props.sandboxIssued}
      />
    </CompanyFrame>
  );
}

/** The service's address and a first call, ready to paste but for what the page cannot know. */
function FirstCall(props: { company: Company; baseUrl: string; view: AccessView }): VNode {
  const { company, baseUrl, view } = props;
  const body = JSON.stringify({ org_id: company.id, secret: '<your secret>', ref: 'ORD-1' });
  return (
    <section class="card" aria-labelledby="first-call-title">
      <h2 id="first-call-title">Your first call</h2>
      <p>
        Base URL: <code>{baseUrl}</code>. Every call is{' '}
        <code>POST {baseUrl}/api/company.php?a=&lt;action&gt;</code> with a JSON body; the actions are{' '}
        <code>request</code>, <code>status</code> and <code>open</code>.
      </p>
      {view.kind === 'domain' ? (
        <>
          <p>Create a request, signed with your key (add --print to get it as a curl command instead):</p>
          <pre class="secret">
            {`npm run company -- sign --key company-key.json --url ${baseUrl} --action request --body '{"ref":"ORD-1"}'`}
          </pre>
        </>
      ) : (
        <>
          <p>
            Create a request with your company id, <code>{company.id}</code>, and your secret in place of{' '}
            <code>&lt;your secret&gt;</code>:
          </p>
          <pre class="secret">
            {`curl -sS "${baseUrl}/api/company.php?a=request" -H 'Content-Type: application/json' -d '${body}'`}
          </pre>
        </>
      )}
      <p class="muted small">
        The answer holds a <code>url</code> to show your customer as a link or QR code, and a{' '}
        <code>code</code> to follow the request with <code>a=status</code>.
      </p>
    </section>
  );
}
