import type { VNode } from 'preact';
import type { RequestState } from '../../foundation/db/schema.js';
import type { PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { Company } from '../../rules/companies/companies.js';
import { type CompanyRequestRow, REQUEST_STATES } from '../../rules/requests/company-requests.js';
import { CompanyFrame, companyPath } from './company-frame.js';
import { ListEmpty, ListPager } from './listing.js';

/**
 * `/company/<id>/requests` (docs/design.md section 11.4): the company's requests, newest first, with each state
 * change's time, filterable by state and by the beginning of `ref`, paged by links.
 */
export interface RequestFilters {
  state?: RequestState | undefined;
  ref?: string | undefined;
}

const STATE_WORDS: Record<RequestState, { text: string; tone: 'ok' | 'bad' | 'wait' }> = {
  new: { text: 'New', tone: 'wait' },
  claimed: { text: 'Claimed', tone: 'wait' },
  issued: { text: 'Issued', tone: 'ok' },
  revoked: { text: 'Revoked', tone: 'bad' },
  expired: { text: 'Expired', tone: 'bad' },
  declined: { text: 'Declined', tone: 'bad' },
};

export function RequestsPage(props: {
  page: PageContext;
  company: Company;
  filters: RequestFilters;
  before: number | undefined;
  rows: CompanyRequestRow[];
  older: number | null;
}): VNode {
  const { company, filters } = props;
  const path = companyPath(company, 'requests');
  const filtered = filters.state !== undefined || filters.ref !== undefined;
  return (
    <CompanyFrame page={props.page} company={company} section="requests" title="Requests">
      <section class="card" aria-label="Filters">
        <form method="get" action={path} class="filters">
          <div>
            <label for="requests-state">State</label>
            <select id="requests-state" name="state">
              <option value="">All states</option>
              {REQUEST_STATES.map((state) => (
                <option value={state} selected={state === filters.state} key={state}>
                  {STATE_WORDS[state].text}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for="requests-ref">Your ref begins with</label>
            <input
              id="requests-ref"
              name="ref"
              type="text"
              value={filters.ref ?? ''}
              maxLength={128}
              spellcheck={false}
            />
          </div>
          <div>
            <button type="submit">Show</button>
          </div>
        </form>
      </section>
      <section class="card" aria-labelledby="requests-heading">
        <h3 id="requests-heading">{props.before === undefined ? 'Latest requests' : 'Older requests'}</h3>
        {props.rows.length === 0 ? (
          <ListEmpty
            path={path}
            item="request"
            items="requests"
            filtered={filtered}
            before={props.before}
            none={
              'No requests yet: ask a customer for access with the API’s request call, and it appears here.'
            }
          />
        ) : (
          <ul class="list">
            {props.rows.map((row) => (
              <RequestLine row={row} key={row.id} />
            ))}
          </ul>
        )}
        <ListPager path={path} filters={filters} items="requests" before={props.before} older={props.older} />
      </section>
    </CompanyFrame>
  );
}

function RequestLine(props: { row: CompanyRequestRow }): VNode {
  const { row } = props;
  const state = STATE_WORDS[row.state];
  const times: [string, Date | null][] = [
    ['Claimed', row.claimedAt],
    ['Issued', row.issuedAt],
    ['Revoked', row.revokedAt],
    ['Expired', row.expiredAt],
    ['Declined', row.declinedAt],
  ];
  return (
    <li class="row request-line">
      <div class="grow">
        <p>
          <strong>{row.ref ?? 'no ref'}</strong> <span class="muted small">code {row.code}</span>{' '}
          {row.keyRef !== null ? <span class="muted small">key_ref {row.keyRef}</span> : null}
        </p>
        <p class="muted small">
          Created <Moment date={row.createdAt} />
          {times
            .filter(([, at]) => at !== null)
            .map(([label, at]) => (
              <span key={label}>
                {' · '}
                {label} <Moment date={at!} />
              </span>
            ))}
        </p>
      </div>
      <span class={`badge ${state.tone}`}>{state.text}</span>
    </li>
  );
}
