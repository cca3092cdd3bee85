import type { VNode } from 'preact';
import type { CompanyStatus } from '../../foundation/db/schema.js';
import type { PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { Company } from '../../rules/companies/companies.js';
import { SEARCH_MAX_LENGTH } from '../../rules/companies/company-search.js';
import { toUnicodeDomain } from '../../rules/companies/domains.js';
import { type EndpointHealth, endpointHealthWords } from '../../rules/events/endpoint-health.js';
import { STATUS_WORDS } from '../company-area/company-frame.js';
import type { ConsoleOperator } from './console-access.js';
import { ConsoleFrame } from './console-frame.js';
import { keyFacts, PROOF_WORDS } from './key-facts.js';

/**
 * `/console` (docs/design.md section 11.5): the companies, those waiting for approval first, filtered by state and
 * found by name, domain, id or e-mail; for each, its id (which `gatelink-admin` takes), what an operator checks
 * before approving (domain in both spellings, contact, the key) and how its events fare at its endpoints
 * (section 6.2), in the words `gatelink-admin events` prints.
 */
export type StatusFilter = CompanyStatus | 'all';

export const FILTERS: { id: StatusFilter; label: string }[] = [
  { id: 'all', label: 'All' },
  { id: 'pending', label: 'Waiting' },
  { id: 'approved', label: 'Approved' },
  { id: 'rejected', label: 'Not approved' },
  { id: 'suspended', label: 'Suspended' },
];

export function CompaniesPage(props: {
  page: PageContext;
  operator: ConsoleOperator;
  filter: StatusFilter;
  search: string;
  companies: Company[];
  /** The listed companies' endpoints (docs/design.md section 6.2), by company id; none for a company without. */
  endpoints: Map<number, EndpointHealth[]>;
}): VNode {
  const withSearch = (status: StatusFilter) => {
    const query = new URLSearchParams();
    if (status !== 'all') query.set('status', status);
    if (props.search) query.set('q', props.search);
    const text = query.toString();
    return text ? `/console?${text}` : '/console';
  };
  return (
    <ConsoleFrame page={props.page} operator={props.operator} section="companies" title="Companies">
      <h2 class="section-title">Companies</h2>
      <nav class="tabs" aria-label="Show companies">
        {FILTERS.map((filter) => (
          <a
            key={filter.id}
            class="tab"
            href={withSearch(filter.id)}
            aria-current={filter.id === props.filter ? 'page' : undefined}
          >
            {filter.label}
          </a>
        ))}
      </nav>
      <section class="card" aria-label="Companies">
        <form method="get" action="/console" class="filters">
          {props.filter === 'all' ? null : <input type="hidden" name="status" value={props.filter} />}
          <div>
            <label for="company-search">Find a company</label>
            <input
              id="company-search"
              name="q"
              type="search"
              value={props.search}
              maxLength={SEARCH_MAX_LENGTH}
              spellcheck={false}
              aria-describedby="company-search-hint"
            />
            <p id="company-search-hint" class="hint">
              A part of its name, its domain, its id, or the e-mail address of its contact or a member.
            </p>
          </div>
          <p class="actions">
            <button type="submit">Find</button>
            {props.search ? (
              <a href={props.filter === 'all' ? '/console' : `/console?status=${props.filter}`}>Show all</a>
            ) : null}
          </p>
        </form>
        {props.companies.length === 0 ? (
          <p class="muted">{props.search ? `No company matches “${props.search}”.` : 'No company here.'}</p>
        ) : (
          <ul class="list">
            {props.companies.map((company) => (
              <CompanyLine
                key={company.id}
                company={company}
                endpoints={props.endpoints.get(company.id) ?? []}
              />
            ))}
          </ul>
        )}
      </section>
    </ConsoleFrame>
  );
}

function CompanyLine(props: { company: Company; endpoints: EndpointHealth[] }): VNode {
  const { company } = props;
  const status = STATUS_WORDS[company.status];
  return (
    <li class="row">
      <div class="grow">
        <a href={`/console/companies/${company.id}`}>{company.name}</a>{' '}
        <span class="muted small">id {company.id}</span>
        <div class="muted small">
          {company.domain ? <DomainText domain={company.domain} /> : 'No domain: calls with a secret'}
          {' · '}
          {company.contact_email ?? 'no contact address'} · registered <Moment date={company.created_at} />
        </div>
        <div class="small">Events: {endpointHealthWords(props.endpoints)}</div>
        {company.domain && company.status === 'pending' ? <KeyLine company={company} /> : null}
      </div>
      <span class={`badge ${status.tone}`}>{status.text}</span>
    </li>
  );
}

/** A domain as people read it, and its punycode when that differs: the form calls are signed for. */
export function DomainText(props: { domain: string }): VNode {
  const unicode = toUnicodeDomain(props.domain);
  return <span>{unicode === props.domain ? props.domain : `${unicode} (${props.domain})`}</span>;
}

function KeyLine(props: { company: Company }): VNode {
  const facts = keyFacts(props.company);
  return (
    <div class="small">
      {facts.published ? (
        <>
          Key <code>{facts.published}</code>{' '}
          <span class={`badge ${PROOF_WORDS[facts.proof].tone}`}>{PROOF_WORDS[facts.proof].text}</span>
        </>
      ) : (
        <span class="muted">No key checked on the domain yet</span>
      )}
    </div>
  );
}
