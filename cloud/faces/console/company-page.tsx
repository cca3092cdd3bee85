import type { VNode } from 'preact';
import { ErrorSummary } from '../../foundation/web/field-errors.js';
import { TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import { RecordLines } from '../../foundation/web/record-lines.js';
import type { Company } from '../../rules/companies/companies.js';
import type { Member } from '../../rules/companies/members.js';
import { MAX_REASON_LENGTH } from '../../rules/companies/review.js';
import type { EndpointState, LoggedAttempt } from '../../rules/events/delivery-log.js';
import { endpointHealthWords } from '../../rules/events/endpoint-health.js';
import { memberLines } from '../../rules/member-actions/member-action-words.js';
import type { MemberAction } from '../../rules/member-actions/member-actions.js';
import type { OperatorAction } from '../../rules/operators/actions.js';
import { type SandboxUse, sandboxUseWords } from '../../rules/sandbox/sandbox-use.js';
import { STATUS_WORDS } from '../company-area/company-frame.js';
import { ActionHistory } from './action-history.js';
import { DomainText } from './companies-page.js';
import type { ConsoleOperator } from './console-access.js';
import { ConsoleFrame } from './console-frame.js';
import { keyFacts, PROOF_WORDS } from './key-facts.js';

/**
 * `/console/companies/<id>` (docs/design.md section 11.5): what the company registered, its key, what an
 * operator may do in its state (approve or refuse it while it waits, suspend it once approved, resume it), its
 * members and what they did last, how its events fare at each of its endpoints (section 6.2) with its newest
 * delivery attempts, and the history of what operators did to it.
 */
export interface CompanyPageProps {
  page: PageContext;
  operator: ConsoleOperator;
  company: Company;
  actions: OperatorAction[];
  /** The newest actions of its members (section 11.8). */
  memberActions: MemberAction[];
  members: Member[];
  /** Its endpoints with their state, oldest first; none when it has no callback address. */
  endpoints: EndpointState[];
  /** Events kept while it has no endpoint, sent to the first it adds (rules/events/held-events.ts). */
  held: number;
  /** Its newest delivery attempts, to every endpoint. */
  deliveries: LoggedAttempt[];
  /** How it uses its sandbox (section 11.9); null: never. */
  sandbox: SandboxUse | null;
  notice?: string | undefined;
  /** Why the last action was refused (the domain is taken, the key differs), shown above the actions. */
  problem?: string | undefined;
  reason?: string | undefined;
  errors?: FieldErrors | undefined;
}

export function companyUrl(company: { id: number }, action = ''): string {
  return `/console/companies/${company.id}${action ? `/${action}` : ''}`;
}

export function CompanyPage(props: CompanyPageProps): VNode {
  const { company } = props;
  const status = STATUS_WORDS[company.status];
  return (
    <ConsoleFrame page={props.page} operator={props.operator} section="companies" title={company.name}>
      <div class="company-head">
        <h2 class="section-title company-name">{company.name}</h2>
        <span class={`badge ${status.tone}`}>{status.text}</span>
      </div>
      {props.notice ? (
        <div class="notice ok" role="status">
          {props.notice}
        </div>
      ) : null}
      {props.problem ? (
        <div class="notice error" role="alert">
          {props.problem}
        </div>
      ) : null}
      <ErrorSummary errors={props.errors} />
      <Details company={company} />
      <Actions {...props} />
      <Members members={props.members} />
      <MemberRecord actions={props.memberActions} />
      <Events endpoints={props.endpoints} held={props.held} deliveries={props.deliveries} />
      <Sandbox use={props.sandbox} />
      <ActionHistory
        actions={props.actions}
        title="What operators did"
        empty="No operator has acted on this company yet."
      />
    </ConsoleFrame>
  );
}

/** What the company's members did last, as their activity page says it (section 11.8). */
function MemberRecord(props: { actions: MemberAction[] }): VNode {
  return (
    <section class="card" aria-labelledby="member-actions-title">
      <h3 id="member-actions-title">What members did</h3>
      {props.actions.length === 0 ? (
        <p class="muted">No member has changed anything yet.</p>
      ) : (
        <RecordLines lines={memberLines(props.actions)} />
      )}
    </section>
  );
}

function Details(props: { company: Company }): VNode {
  const { company } = props;
  const facts = keyFacts(company);
  return (
    <section class="card" aria-label="Details">
      <dl class="facts">
        <dt>Registered</dt>
        <dd>
          <Moment date={company.created_at} />
        </dd>
        <dt>Contact</dt>
        <dd>{company.contact_email ?? 'none given'}</dd>
        <dt>Domain</dt>
        <dd>
          {company.domain ? <DomainText domain={company.domain} /> : 'None: the company calls with a secret'}
        </dd>
        {company.domain ? (
          <>
            <dt>Key on the domain</dt>
            <dd>
              {facts.published ? (
                <>
                  <code>{facts.published}</code>
                  {facts.publishedAt ? (
                    <span class="muted small">
                      {' '}
                      checked <Moment date={facts.publishedAt} />
                    </span>
                  ) : null}
                </>
              ) : (
                'not checked yet: the company checks its key file in its area'
              )}
            </dd>
            <dt>Proof</dt>
            <dd>
              <span class={`badge ${PROOF_WORDS[facts.proof].tone}`}>{PROOF_WORDS[facts.proof].text}</span>
            </dd>
            <dt>Pinned key</dt>
            <dd>{facts.pinned ? <code>{facts.pinned}</code> : 'none yet'}</dd>
          </>
        ) : null}
        {company.status_reason ? (
          <>
            <dt>Reason the company reads</dt>
            <dd>
              <p class="reason">{company.status_reason}</p>
            </dd>
          </>
        ) : null}
      </dl>
    </section>
  );
}

function Actions(props: CompanyPageProps): VNode {
  const { company } = props;
  switch (company.status) {
    case 'pending':
      return (
        <>
          <Approve {...props} />
          <ReasonForm {...props} action="reject" title="Refuse" button="Refuse approval" />
        </>
      );
    case 'approved':
      return <ReasonForm {...props} action="suspend" title="Suspend" button="Suspend the company" />;
    case 'suspended':
      return (
        <section class="card" aria-labelledby="resume-title">
          <h3 id="resume-title">Resume</h3>
          <p>Its calls work again at once, with the key it had pinned.</p>
          <form method="post" action={companyUrl(company, 'resume')}>
            <CsrfField page={props.page} />
            <button type="submit">Resume the company</button>
          </form>
        </section>
      );
    case 'rejected':
      return (
        <p class="muted">
          Not approved. The company may correct its details and ask again; it then waits here once more.
        </p>
      );
  }
}

function Approve(props: CompanyPageProps): VNode {
  const { company } = props;
  const proved = company.domain === null || keyFacts(company).proof === 'proved';
  return (
    <section class="card" aria-labelledby="approve-title">
      <h3 id="approve-title">Approve</h3>
      {company.domain === null ? (
        <p>The company calls with a secret, which its owner issues in its area once approved.</p>
      ) : proved ? (
        <p>
          Approving fetches the key on the domain now and pins it only if it is still the key the company
          proved it holds.
        </p>
      ) : (
        <p>
          The company has not proved that it holds its domain's key. It does so in its area; until then it
          cannot be approved.
        </p>
      )}
      {proved ? (
        <form method="post" action={companyUrl(company, 'approve')}>
          <CsrfField page={props.page} />
          <button type="submit">Approve {company.name}</button>
        </form>
      ) : null}
    </section>
  );
}

function ReasonForm(
  props: CompanyPageProps & { action: 'reject' | 'suspend'; title: string; button: string },
): VNode {
  return (
    <section class="card" aria-labelledby={`${props.action}-title`}>
      <h3 id={`${props.action}-title`}>{props.title}</h3>
      <form method="post" action={companyUrl(props.company, props.action)} novalidate>
        <CsrfField page={props.page} />
        <TextField
          id="reason"
          name="reason"
          label="Reason"
          hint={`The company reads it in its area, as written (at most ${MAX_REASON_LENGTH} characters).`}
          value={props.reason}
          errors={props.errors}
          maxLength={MAX_REASON_LENGTH}
        />
        <p class="actions">
          <button type="submit" class="danger">
            {props.button}
          </button>
        </p>
      </form>
    </section>
  );
}

function Members(props: { members: Member[] }): VNode {
  return (
    <section class="card" aria-labelledby="members-title">
      <h3 id="members-title">Members</h3>
      <ul class="list">
        {props.members.map((member) => (
          <li key={member.id}>
            {member.displayName ?? 'Not signed in yet'} · {member.email ?? 'no e-mail address'}{' '}
            <span class="badge">{member.role === 'owner' ? 'Owner' : 'Member'}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * Its endpoints as `gatelink-admin events` tells them: the line of the list of companies, then each endpoint's
 * state; and the newest attempts, each with the address it was made to.
 */
function Events(props: { endpoints: EndpointState[]; held: number; deliveries: LoggedAttempt[] }): VNode {
  const { endpoints, held } = props;
  const summary = endpointHealthWords(
    endpoints.map((endpoint) => ({ kinds: endpoint.kinds, failing: endpoint.failingSince !== null })),
  );
  return (
    <section class="card" aria-labelledby="events-title">
      <h3 id="events-title">Events</h3>
      {endpoints.length === 0 ? (
        <p>
          No callback address: nothing is sent.{' '}
          {held === 0
            ? 'None is waiting.'
            : `${held === 1 ? '1 event is' : `${held} events are`} kept for about three days.`}
        </p>
      ) : (
        <>
          <p>{summary.charAt(0).toUpperCase() + summary.slice(1)}.</p>
          <ul class="list">
            {endpoints.map((endpoint) => (
              <EndpointLine key={endpoint.id} endpoint={endpoint} />
            ))}
          </ul>
        </>
      )}
      {props.deliveries.length === 0 ? (
        <p class="muted">No delivery attempts yet.</p>
      ) : (
        <ul class="list">
          {props.deliveries.map((attempt) => (
            <li key={attempt.id} class="small">
              <Moment date={attempt.at} seconds /> · <code>{attempt.type}</code> to {attempt.url} · attempt{' '}
              {attempt.attempt} · {attempt.outcome === 'delivered' ? 'delivered' : 'failed'}
              {attempt.status !== null ? ` · HTTP ${attempt.status}` : ''}
              {attempt.error ? ` · ${attempt.error}` : ''}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function EndpointLine(props: { endpoint: EndpointState }): VNode {
  const { endpoint } = props;
  return (
    <li>
      <p class="address">{endpoint.url}</p>
      <p>
        {endpoint.failingSince ? (
          <>
            <span class="badge bad">Failing</span> since <Moment date={endpoint.failingSince} seconds />
          </>
        ) : endpoint.pausedUntil ? (
          <>
            <span class="badge wait">Retrying</span> after <Moment date={endpoint.pausedUntil} seconds />
          </>
        ) : (
          <span class="badge ok">Working</span>
        )}{' '}
        · {endpoint.waiting} waiting, {endpoint.retrying} of them retried · takes{' '}
        {endpoint.kinds === null ? 'every kind' : `${endpoint.kinds.join(', ')}, ping`}
      </p>
      {endpoint.lastError && (endpoint.failingSince || endpoint.pausedUntil) ? (
        <p class="small">Last error: {endpoint.lastError}</p>
      ) : null}
    </li>
  );
}

/** Its sandbox's use, as `gatelink-admin company show` says it (docs/design.md section 11.9). */
function Sandbox(props: { use: SandboxUse | null }): VNode {
  const { use } = props;
  return (
    <section class="card" aria-labelledby="sandbox-title">
      <h3 id="sandbox-title">Sandbox</h3>
      <p>
        {use ? (
          <>
            Made <Moment date={use.madeAt} />: {sandboxUseWords(use)}
            {use.lastOpeningAt ? (
              <>
                ; the last opening <Moment date={use.lastOpeningAt} />
              </>
            ) : null}
            .
          </>
        ) : (
          'Never used: the company has not called its sandbox.'
        )}
      </p>
    </section>
  );
}
