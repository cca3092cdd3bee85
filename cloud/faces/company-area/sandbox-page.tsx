import type { VNode } from 'preact';
import { SANDBOX_OUTCOMES, type SandboxOutcomeName } from '../../../shared/company-api/sandbox-calls.js';
import { ChangeForm } from '../../foundation/web/change-form.js';
import type { PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import { SANDBOX_GATE_TIMES } from '../../links/controllers/sandbox-controller.js';
import type { Company } from '../../rules/companies/companies.js';
import type { CompanyJournalEntry } from '../../rules/journal/company-journal.js';
import type { SandboxRequest } from '../../rules/sandbox/sandbox-customer.js';
import { CompanyFrame, companyPath } from './company-frame.js';
import { OpeningLine } from './journal-page.js';

/**
 * `/company/<id>/sandbox` (docs/design.md section 11.9): the simulated customer and barrier of the company's
 * sandbox, moved from here as `a=sandbox` moves them: grant a request waiting, withdraw a key, choose what the
 * next openings come to; and the sandbox's openings, as the Openings page shows the live ones.
 */
export interface SandboxPageProps {
  page: PageContext;
  company: Company;
  /** Null until the company's first sandbox call. */
  state: { outcome: SandboxOutcomeName; requests: SandboxRequest[] } | null;
  openings: CompanyJournalEntry[];
  /** The sandbox's own endpoints, oldest first (none: its events go to `listen` only). */
  endpoints: readonly { id: number; url: string }[];
  notice?: string | undefined;
  problem?: string | undefined;
}

const OUTCOME_CHOICES: Record<SandboxOutcomeName, string> = {
  opened: `Open: the gate opens, then closes ${SANDBOX_GATE_TIMES.closesAfterMs / 1000} seconds later`,
  offline: 'Offline: the barrier cannot be reached (503 device_offline)',
  busy: 'Busy: the controller refuses (502 device_error, detail busy)',
  gate_not_moved: 'Stuck: the relay fires and the gate never moves (open.gate_not_moved)',
};

export function SandboxPage(props: SandboxPageProps): VNode {
  const { company, state } = props;
  return (
    <CompanyFrame page={props.page} company={company} section="sandbox" title="Sandbox">
      <p>
        Calls with <code>"sandbox": true</code> reach a simulated customer and a barrier we run for you, apart
        from every real one (API access says how). Here you move them as <code>a=sandbox</code> does.
      </p>
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
      {state ? (
        <>
          <Requests page={props.page} company={company} requests={state.requests} />
          <NextOutcome page={props.page} company={company} outcome={state.outcome} />
          <SandboxEvents company={company} endpoints={props.endpoints} />
          <section class="card" aria-labelledby="sandbox-openings-title">
            <h3 id="sandbox-openings-title">Openings</h3>
            {props.openings.length === 0 ? (
              <p class="muted">No opening yet: call open with a key granted here.</p>
            ) : (
              <ul class="list">
                {props.openings.map((entry) => (
                  <OpeningLine entry={entry} key={entry.id} />
                ))}
              </ul>
            )}
          </section>
        </>
      ) : (
        <section class="card">
          <p>
            Your sandbox is made with your first call that says <code>"sandbox": true</code>, such as a
            request:
          </p>
          <pre class="secret">npm run company -- request --sandbox</pre>
        </section>
      )}
    </CompanyFrame>
  );
}

function Requests(props: { page: PageContext; company: Company; requests: SandboxRequest[] }): VNode {
  const path = companyPath(props.company, 'sandbox');
  return (
    <section class="card" aria-labelledby="sandbox-requests-title">
      <h3 id="sandbox-requests-title">The simulated customer</h3>
      {props.requests.length === 0 ? (
        <p class="muted">No request waits and no key stands: make a request with "sandbox": true.</p>
      ) : (
        <ul class="list">
          {props.requests.map((request) => (
            <li key={request.code}>
              <code>{request.code}</code>
              {request.ref ? ` · ref ${request.ref}` : ''}
              <div class="muted small">
                Asked <Moment date={request.createdAt} />
                {request.keyRef !== null ? ` · granted, key_ref ${request.keyRef}` : ' · waiting'}
              </div>
              {request.keyRef === null ? (
                <ChangeForm page={props.page} action={`${path}/grant`}>
                  <input type="hidden" name="code" value={request.code} />
                  <button type="submit" class="secondary">
                    Grant {request.code}
                  </button>
                  <span class="hint"> as asked, on the sandbox gate</span>
                </ChangeForm>
              ) : (
                <ChangeForm page={props.page} action={`${path}/withdraw`}>
                  <input type="hidden" name="key_ref" value={String(request.keyRef)} />
                  <button type="submit" class="secondary">
                    Withdraw key {request.keyRef}
                  </button>
                </ChangeForm>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function NextOutcome(props: { page: PageContext; company: Company; outcome: SandboxOutcomeName }): VNode {
  return (
    <section class="card" aria-labelledby="sandbox-outcome-title">
      <h3 id="sandbox-outcome-title">The barrier</h3>
      <ChangeForm page={props.page} action={`${companyPath(props.company, 'sandbox')}/outcome`}>
        <fieldset>
          <legend>What the next openings come to</legend>
          {SANDBOX_OUTCOMES.map((outcome) => (
            <label class="choice" key={outcome}>
              <input type="radio" name="outcome" value={outcome} checked={outcome === props.outcome} />
              {OUTCOME_CHOICES[outcome]}
            </label>
          ))}
        </fieldset>
        <p class="actions">
          <button type="submit">Save</button>
        </p>
      </ChangeForm>
    </section>
  );
}

/** Where the sandbox's events go: `listen --sandbox`, and its own endpoints with their own log (section 6.2). */
function SandboxEvents(props: {
  company: Company;
  endpoints: readonly { id: number; url: string }[];
}): VNode {
  const path = companyPath(props.company, 'sandbox');
  const { endpoints } = props;
  return (
    <section class="card" aria-labelledby="sandbox-events-title">
      <h3 id="sandbox-events-title">Events</h3>
      <p>
        The sandbox's events, each marked <code>"sandbox": true</code>, stream to{' '}
        <code>npm run company -- listen --sandbox</code>
        {endpoints.length === 0
          ? '.'
          : ` and go to ${endpoints.length === 1 ? 'its endpoint' : `its ${endpoints.length} endpoints`}:`}
      </p>
      {endpoints.length > 0 ? (
        <ul class="list">
          {endpoints.map((endpoint) => (
            <li key={endpoint.id} class="address">
              {endpoint.url}
            </li>
          ))}
        </ul>
      ) : null}
      <p class="actions">
        <a href={`${path}/callback`}>
          {endpoints.length > 0 ? 'Sandbox callback endpoints' : 'Add a callback endpoint for the sandbox'}
        </a>
        <a href={`${path}/events`}>Sandbox events and deliveries</a>
      </p>
    </section>
  );
}
