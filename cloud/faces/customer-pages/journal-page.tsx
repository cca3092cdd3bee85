import { Fragment, type VNode } from 'preact';
import { Layout, type PageContext, readerZone } from '../../foundation/web/page.js';
import { capitalised, Moment } from '../../foundation/web/readable-time.js';
import type { CompanyDisplay } from '../../rules/companies/display.js';
import type { CustomerBarrier } from '../../rules/devices/customer-barriers.js';
import type { BarrierJournalEntry, EntryQuestion } from '../../rules/journal/barrier-journal.js';
import type { EntryOutcome } from '../../rules/journal/entry-outcome.js';
import { gateSteps, gateStory, type StoryPart } from '../../rules/journal/gate-story.js';
import {
  ENTRY_OUTCOMES,
  extraDetail,
  OUTCOME_WORDS,
  outcomeTone,
  outcomeWords,
  PHONE_CALL_WORDS,
} from '../../rules/journal/outcome-words.js';
import { CompanyLogo } from './company-mark.js';

/**
 * A barrier's journal as its customer reads it (docs/design.md section 10.5): each line says who opened (the
 * company's `actor`, as text), for which company (its logo or initial, its name, its verified domain), which
 * object, with what outcome in words, and when, in the reader's zone. Filters are a plain GET form and paging is links, so
 * the page works without script and every view of it is a URL the customer can keep.
 */
export interface JournalFilters {
  company?: number | undefined;
  outcome?: EntryOutcome | undefined;
}

export interface JournalPageProps {
  page: PageContext;
  barrier: CustomerBarrier;
  companies: CompanyDisplay[];
  filters: JournalFilters;
  /** The `before` this page was asked for; absent on the newest page. */
  before: number | undefined;
  entries: BarrierJournalEntry[];
  older: number | null;
}

/** The journal's URL with its filters (and `before`), for links and the CSV export. */
export function journalHref(
  barrierId: string,
  filters: JournalFilters & { before?: number | undefined },
  format: 'page' | 'csv' = 'page',
): string {
  const query = new URLSearchParams();
  if (filters.company !== undefined) query.set('company', String(filters.company));
  if (filters.outcome !== undefined) query.set('outcome', filters.outcome);
  if (filters.before !== undefined) query.set('before', String(filters.before));
  const path = `/barriers/${encodeURIComponent(barrierId)}/journal${format === 'csv' ? '.csv' : ''}`;
  const search = query.toString();
  return search ? `${path}?${search}` : path;
}

/** Where the receipts' verifier is explained (the page of docs/receipts.md's verifier). */
export const RECEIPTS_GUIDE = '/receipts';

export function JournalPage(props: JournalPageProps): VNode {
  const { barrier, filters, entries } = props;
  const filtered = filters.company !== undefined || filters.outcome !== undefined;
  return (
    <Layout title={`Journal of ${barrier.name}`} page={props.page}>
      <p class="small">
        <a href={`/barriers/${encodeURIComponent(barrier.id)}`}>{barrier.name}</a>
      </p>
      <h1>Journal of {barrier.name}</h1>
      <p class="muted">
        Every opening of this barrier by a company you gave access, and every attempt that was refused, newest
        first. Times are in {readerZone(props.page)}.
      </p>
      <section class="card" aria-label="Filters and download">
        <Filters barrierId={barrier.id} companies={props.companies} filters={filters} />
        <p class="actions">
          <a class="button secondary" href={journalHref(barrier.id, filters, 'csv')}>
            {filtered ? 'Download these entries as CSV' : 'Download the journal as CSV'}
          </a>{' '}
          <a
            class="button secondary"
            href={`/barriers/${encodeURIComponent(barrier.id)}/journal.receipts.jsonl`}
          >
            Download the receipts
          </a>
        </p>
        <p class="small muted">
          The receipts are every final entry of your journal, chained and signed so that you can check them
          without trusting us, with the controller's own signature on each opening;{' '}
          <a href={RECEIPTS_GUIDE}>how to check them</a>.
        </p>
      </section>
      <section class="card" aria-labelledby="entries-heading">
        <h2 id="entries-heading">{props.before === undefined ? 'Latest entries' : 'Older entries'}</h2>
        {entries.length === 0 ? (
          <Empty barrierId={barrier.id} filtered={filtered} paged={props.before !== undefined} />
        ) : (
          <ul class="list journal">
            {entries.map((entry) => (
              <JournalLine entry={entry} key={entry.id} />
            ))}
          </ul>
        )}
        <Pager barrierId={barrier.id} filters={filters} before={props.before} older={props.older} />
      </section>
    </Layout>
  );
}

function Filters(props: { barrierId: string; companies: CompanyDisplay[]; filters: JournalFilters }): VNode {
  const { filters } = props;
  return (
    <form method="get" action={journalHref(props.barrierId, {})} class="filters">
      <div>
        <label for="journal-company">Company</label>
        <select id="journal-company" name="company">
          <option value="">All companies</option>
          {props.companies.map((company) => (
            <option value={String(company.id)} selected={company.id === filters.company} key={company.id}>
              {company.verifiedDomain ? `${company.name} (${company.verifiedDomain})` : company.name}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="journal-outcome">Outcome</label>
        <select id="journal-outcome" name="outcome">
          <option value="">All outcomes</option>
          {ENTRY_OUTCOMES.map((outcome) => (
            <option value={outcome} selected={outcome === filters.outcome} key={outcome}>
              {OUTCOME_WORDS[outcome]}
            </option>
          ))}
        </select>
      </div>
      <div>
        <button type="submit">Show</button>
      </div>
    </form>
  );
}

/**
 * One entry, read as a sentence: "Anna, shift 2 of Demo Cleaning Ltd · Opened · Main gate", what the gate's
 * sensor saw when it has one ("gate open after 1.8 s · closed after 42 s"), then its time, and the steps with
 * their times behind a disclosure that needs no script. The actor is the company's text; Preact escapes it
 * like every text, so it can never become markup.
 */
/** Who answered an opening the key asks about first (docs/design.md section 10.8), and when. */
function AskedLine(props: { asked: EntryQuestion }): VNode {
  const { asked } = props;
  if (asked.kind === 'call') return <CallLine asked={asked} />;
  if (asked.answer === 'waiting') return <p class="small">Asked first: waiting for an answer</p>;
  if (asked.answer === 'unanswered') return <p class="small">Asked first: nobody answered in time</p>;
  const verb = asked.answer === 'allowed' ? 'Allowed' : 'Denied';
  return (
    <p class="small" data-asked={asked.answer}>
      Asked first: {verb}
      {asked.by ? ` by ${asked.by}` : ''}
      <AnsweredAt at={asked.at} />
    </p>
  );
}

/** The household asked to call the gate while the phone's controller was offline (section 10.9), and who did. */
function CallLine(props: { asked: EntryQuestion }): VNode {
  const { asked } = props;
  const lead = 'Phone offline, asked you to call the gate: ';
  if (asked.answer === 'waiting') return <p class="small">{lead}waiting for a tap</p>;
  if (asked.answer !== 'called') return <p class="small">{lead}nobody tapped Call the gate in time</p>;
  return (
    <p class="small" data-asked="called">
      {lead}
      {asked.by ?? 'someone'} tapped Call the gate
      <AnsweredAt at={asked.at} />
    </p>
  );
}

/** " at 15:02:07", when the answer's time is known. */
function AnsweredAt(props: { at: Date | null }): VNode | null {
  if (!props.at) return null;
  return (
    <>
      {' '}
      at <Moment date={props.at} seconds />
    </>
  );
}

function JournalLine(props: { entry: BarrierJournalEntry }): VNode {
  const { entry } = props;
  const extra = extraDetail(entry.outcome, entry.detail);
  const story = gateStory(entry);
  return (
    <li class="entry" id={`entry-${entry.id}`}>
      <CompanyLogo company={entry.company} small />
      <div class="what">
        <p class="who">
          <span class="actor">{entry.actor}</span> <span class="muted">of</span>{' '}
          <strong>{entry.company.name}</strong>{' '}
          <span class="muted small">
            {entry.company.verifiedDomain ? `(${entry.company.verifiedDomain})` : '(domain not confirmed)'}
          </span>
        </p>
        <p class="how">
          <span class={`badge ${outcomeTone(entry.outcome)}`}>
            {outcomeWords(entry.outcome, entry.detail, entry.phoneCall)}
          </span>
          {entry.objectLabel ? <span class="object">{entry.objectLabel}</span> : null}
        </p>
        {entry.phoneCall ? <p class="muted small">{PHONE_CALL_WORDS[entry.phoneCall]}</p> : null}
        {entry.asked ? <AskedLine asked={entry.asked} /> : null}
        {entry.joinedPulse ? (
          <p class="muted small">
            One pulse with the opening before: the relay was already opening the gate.
          </p>
        ) : null}
        {story ? <GateStory parts={story} /> : null}
        {extra ? <p class="muted small">{extra}</p> : null}
        <Moment date={entry.at} />
        {story ? <GateSteps entry={entry} /> : null}
      </div>
    </li>
  );
}

/** What the sensor saw, its parts joined by " · "; what went wrong is marked in words and in colour. */
function GateStory(props: { parts: StoryPart[] }): VNode {
  return (
    <p class="story">
      {props.parts.map((part, i) => (
        <Fragment key={part.words}>
          {i > 0 ? <span aria-hidden="true">{' · '}</span> : null}
          <span class={part.tone ? `story-part ${part.tone}` : 'story-part'}>
            {i === 0 ? capitalised(part.words) : part.words}
            {part.at ? (
              <>
                {' '}
                <Moment date={part.at} />
              </>
            ) : null}
          </span>
        </Fragment>
      ))}
    </p>
  );
}

/** Every known step of the opening with its time to the second. */
function GateSteps(props: { entry: BarrierJournalEntry }): VNode {
  return (
    <details class="gate-steps">
      <summary>Steps of this opening</summary>
      <ol>
        {gateSteps(props.entry).map((step) => (
          <li key={step.words}>
            {step.words} <Moment date={step.at} seconds />
          </li>
        ))}
      </ol>
    </details>
  );
}

function Empty(props: { barrierId: string; filtered: boolean; paged: boolean }): VNode {
  if (props.filtered) {
    return (
      <p>
        No entries match these filters. <a href={journalHref(props.barrierId, {})}>Show every entry</a>
      </p>
    );
  }
  if (props.paged) return <p>There are no older entries.</p>;
  return (
    <p>
      The journal is empty: nobody has opened this barrier through Gatelink yet. Each opening, and each
      refused attempt, will appear here.
    </p>
  );
}

function Pager(props: {
  barrierId: string;
  filters: JournalFilters;
  before: number | undefined;
  older: number | null;
}): VNode | null {
  if (props.before === undefined && props.older === null) return null;
  return (
    <nav class="pager" aria-label="Journal pages">
      {props.before !== undefined ? (
        <a href={journalHref(props.barrierId, props.filters)}>Newest entries</a>
      ) : (
        <span />
      )}
      {props.older !== null ? (
        <a href={journalHref(props.barrierId, { ...props.filters, before: props.older })}>Older entries</a>
      ) : null}
    </nav>
  );
}
