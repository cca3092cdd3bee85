import type { VNode } from 'preact';
import { type PageContext, readerZone } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { Company } from '../../rules/companies/companies.js';
import type { CompanyJournalEntry } from '../../rules/journal/company-journal.js';
import type { EntryOutcome } from '../../rules/journal/entry-outcome.js';
import {
  ENTRY_OUTCOMES,
  extraDetail,
  OUTCOME_WORDS,
  outcomeTone,
  outcomeWords,
} from '../../rules/journal/outcome-words.js';
import { CompanyFrame, companyPath } from './company-frame.js';
import { ListEmpty, ListPager } from './listing.js';

/**
 * `/company/<id>/journal` (docs/design.md section 11.4): every opening the company's employees made or tried,
 * newest first: who (`actor`), the outcome in the words customers read, the barrier and object, the request's
 * `ref` and `key_ref`, and when. Filtered by employee, ref and outcome with a GET form; paged by links.
 */
export interface CompanyJournalFilters {
  actor?: string | undefined;
  ref?: string | undefined;
  outcome?: EntryOutcome | undefined;
}

export function CompanyJournalPage(props: {
  page: PageContext;
  company: Company;
  filters: CompanyJournalFilters;
  before: number | undefined;
  entries: CompanyJournalEntry[];
  older: number | null;
}): VNode {
  const { company, filters } = props;
  const path = companyPath(company, 'journal');
  const filtered = Object.values(filters).some((value) => value !== undefined);
  return (
    <CompanyFrame page={props.page} company={company} section="journal" title="Openings">
      <p class="muted">
        Every opening by your employees, and every refused attempt, newest first. Times are in{' '}
        {readerZone(props.page)}.
      </p>
      <section class="card" aria-label="Filters">
        <form method="get" action={path} class="filters">
          <div>
            <label for="journal-actor">Employee (actor) contains</label>
            <input id="journal-actor" name="actor" type="text" value={filters.actor ?? ''} maxLength={128} />
          </div>
          <div>
            <label for="journal-ref">Your ref begins with</label>
            <input
              id="journal-ref"
              name="ref"
              type="text"
              value={filters.ref ?? ''}
              maxLength={128}
              spellcheck={false}
            />
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
      </section>
      <section class="card" aria-labelledby="openings-heading">
        <h3 id="openings-heading">{props.before === undefined ? 'Latest openings' : 'Older openings'}</h3>
        {props.entries.length === 0 ? (
          <ListEmpty
            path={path}
            item="opening"
            items="openings"
            filtered={filtered}
            before={props.before}
            none={'No openings yet: each call to open, and each refusal, will appear here.'}
          />
        ) : (
          <ul class="list journal">
            {props.entries.map((entry) => (
              <OpeningLine entry={entry} key={entry.id} />
            ))}
          </ul>
        )}
        <ListPager path={path} filters={filters} items="openings" before={props.before} older={props.older} />
      </section>
    </CompanyFrame>
  );
}

/** One opening: "Anna, van 7 · Opened · Front gate, Demo barrier", then ref, key and time. */
export function OpeningLine(props: { entry: CompanyJournalEntry }): VNode {
  const { entry } = props;
  const extra = extraDetail(entry.outcome, entry.detail);
  const where = [entry.objectLabel, entry.barrierLabel].filter((part) => part !== null).join(', ');
  return (
    <li class="entry" id={`opening-${entry.id}`}>
      <div class="what">
        <p class="who">
          <span class="actor">{entry.actor}</span>
        </p>
        <p class="how">
          <span class={`badge ${outcomeTone(entry.outcome)}`}>
            {outcomeWords(entry.outcome, entry.detail)}
          </span>
          {where ? <span class="object">{where}</span> : null}
        </p>
        {extra ? <p class="muted small">{extra}</p> : null}
        <p class="muted small">
          {entry.ref ? `ref ${entry.ref} · ` : ''}key_ref {entry.keyRef}
          {entry.numberId !== null ? ` · number_id ${entry.numberId}` : ''} · journal id {entry.id}
        </p>
        <Moment date={entry.at} />
      </div>
    </li>
  );
}
