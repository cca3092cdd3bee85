import type { VNode } from 'preact';
import { EVENT_KINDS } from '../../../shared/company-api/events.js';
import { ChangeForm } from '../../foundation/web/change-form.js';
import type { PageContext } from '../../foundation/web/page.js';
import { Moment, useReaderZone, zoneWords } from '../../foundation/web/readable-time.js';
import { wallClockOf } from '../../foundation/zones/wall-clock.js';
import type { Company } from '../../rules/companies/companies.js';
import type { EndpointState, LogFilter, LoggedAttempt } from '../../rules/events/delivery-log.js';
import { CompanyFrame } from './company-frame.js';
import { EndpointBadge } from './endpoint-state.js';
import { type EventSide, sidePath, sideSection } from './event-side.js';

/**
 * `/company/<id>/events` (docs/design.md sections 6 and 6.2): whether each of the company's endpoints receives
 * its events, the delivery log newest first in pages, a test event, and a retry of an endpoint once it is
 * failing; `/company/<id>/sandbox/events` the same for its sandbox's (section 11.9).
 */
export interface EventsPageProps {
  page: PageContext;
  /** The company whose area this is. */
  company: Company;
  /** Whose events: the company's, or its sandbox's. */
  side: EventSide;
  /** The side's endpoints with their state, oldest first. */
  endpoints: EndpointState[];
  log: LoggedAttempt[];
  /** The log row the next (older) page starts before, when there is one. */
  older: number | undefined;
  /** This page starts before that row: not the newest. */
  before: number | undefined;
  /** The endpoint, kind, outcome and span of time the log is narrowed to. */
  filter: LogFilter;
  notice?: { tone: 'ok' | 'error'; text: string } | undefined;
}

/** A moment as a `datetime-local` field holds it, in `zone`: "2026-11-28T14:05". */
export function localField(date: Date, zone: string): string {
  const wall = wallClockOf(date, zone);
  return `${wall.day}T${wall.time}`;
}

/**
 * "Until 14:05" takes in the whole minute: the filter's bound is the minute after the one typed, and the field
 * shows the one typed.
 */
export const UNTIL_MINUTE_MS = 60_000;

function untilField(until: Date, zone: string): string {
  return localField(new Date(until.getTime() - UNTIL_MINUTE_MS), zone);
}

/** The page's address with the filter kept, and `before` when paging. */
function logHref(path: string, filter: LogFilter, zone: string, before?: number): string {
  const query = new URLSearchParams();
  if (filter.endpoint !== undefined) query.set('endpoint', String(filter.endpoint));
  if (filter.kind) query.set('kind', filter.kind);
  if (filter.outcome) query.set('outcome', filter.outcome);
  if (filter.from) query.set('from', localField(filter.from, zone));
  if (filter.until) query.set('until', untilField(filter.until, zone));
  if (before !== undefined) query.set('before', String(before));
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

export function EventsPage(props: EventsPageProps): VNode {
  const { side } = props;
  const path = sidePath(side, 'events');
  const zone = useReaderZone();
  const { filter } = props;
  // An attempt to an endpoint removed since, or logged by a previous release, has no endpoint to send to again.
  const ids = new Set(props.endpoints.map((endpoint) => endpoint.id));
  const narrowed =
    filter.endpoint !== undefined || filter.kind || filter.outcome || filter.from || filter.until;
  return (
    <CompanyFrame
      page={props.page}
      company={props.company}
      section={sideSection(side, 'events')}
      title={side.sandbox ? 'Sandbox events' : 'Events'}
    >
      {side.sandbox ? (
        <p>
          Your sandbox's events, each marked <code>"sandbox": true</code>, apart from your live ones. Back to
          the <a href={side.base}>sandbox</a>.
        </p>
      ) : null}
      {props.notice ? (
        <div class={`notice ${props.notice.tone}`} role={props.notice.tone === 'ok' ? 'status' : 'alert'}>
          {props.notice.text}
        </div>
      ) : null}
      <Endpoints {...props} />
      <section class="card" aria-labelledby="log-title">
        <h3 id="log-title">{props.before === undefined ? 'Delivery log' : 'Delivery log, older attempts'}</h3>
        <LogFilters path={path} filter={props.filter} endpoints={props.endpoints} />
        {props.log.length === 0 ? (
          <p class="muted">{narrowed ? 'No attempts match these filters.' : 'No attempts yet.'}</p>
        ) : (
          <ul class="list">
            {props.log.map((attempt) => (
              <LogLine
                key={attempt.id}
                attempt={attempt}
                page={props.page}
                path={path}
                resendable={ids.has(attempt.endpointId ?? 0)}
              />
            ))}
          </ul>
        )}
        <p class="actions">
          {props.before !== undefined ? <a href={logHref(path, filter, zone)}>Newest attempts</a> : null}
          {props.older !== undefined ? (
            <a href={logHref(path, filter, zone, props.older)}>Older attempts</a>
          ) : null}
        </p>
      </section>
    </CompanyFrame>
  );
}

/**
 * Each endpoint with where it stands, the kinds it takes and what waits for it, and its own "Retry now": a
 * receiver that is down holds up only its own events (docs/design.md section 6.2).
 */
function Endpoints(props: EventsPageProps): VNode {
  const { endpoints, side } = props;
  const path = sidePath(side, 'events');
  const callback = sidePath(side, 'callback');
  if (endpoints.length === 0) {
    return (
      <section class="card" aria-labelledby="endpoints-title">
        <h3 id="endpoints-title">No endpoint</h3>
        <p>
          Nothing is sent. <a href={callback}>Add an endpoint</a> to receive{' '}
          {side.sandbox ? "the sandbox's" : "the company's"} events; until then they are kept for about three
          days and then dropped.
        </p>
      </section>
    );
  }
  return (
    <section class="card" aria-labelledby="endpoints-title">
      <h3 id="endpoints-title">{endpoints.length === 1 ? 'Endpoint' : 'Endpoints'}</h3>
      <ul class="list">
        {endpoints.map((endpoint) => (
          <EndpointLine key={endpoint.id} endpoint={endpoint} page={props.page} side={side} />
        ))}
      </ul>
      {props.page.lookOnly ? null : (
        <div class="actions">
          <ChangeForm page={props.page} action={`${path}/test`}>
            <button type="submit" class="secondary">
              Send a test event
            </button>
          </ChangeForm>
        </div>
      )}
    </section>
  );
}

function EndpointLine(props: { endpoint: EndpointState; page: PageContext; side: EventSide }): VNode {
  const { endpoint } = props;
  const manage = `${sidePath(props.side, 'callback')}/${endpoint.id}`;
  return (
    <li>
      <p>
        <a class="address" href={manage}>
          {endpoint.url}
        </a>{' '}
        <EndpointBadge state={endpoint} />
      </p>
      <p class="small">
        {endpoint.kinds === null ? (
          'It takes every kind of event.'
        ) : (
          <>
            It takes {endpoint.kinds.length === 1 ? 'one kind' : `${endpoint.kinds.length} kinds`} of event:{' '}
            {endpoint.kinds.join(', ')}, and test events.
          </>
        )}{' '}
        <a href={`${manage}#kinds`}>Choose the kinds</a>
      </p>
      {endpoint.failingSince ? (
        <p>
          An event could not be delivered here for about three days, so nothing more is sent to it until you
          change its address or retry. {endpoint.waiting} event
          {endpoint.waiting === 1 ? ' is' : 's are'} waiting.
        </p>
      ) : endpoint.pausedUntil ? (
        <p>
          The last attempt failed. {endpoint.retrying} event{endpoint.retrying === 1 ? '' : 's'} will be
          retried.
        </p>
      ) : (
        <p class="muted">
          {endpoint.waiting === 0
            ? `Every event ${endpoint.kinds === null ? '' : 'of those kinds '}has been delivered.`
            : `${endpoint.waiting} event${endpoint.waiting === 1 ? ' is' : 's are'} on the way${endpoint.retrying > 0 ? `, ${endpoint.retrying} of them retried on a schedule` : ''}.`}
        </p>
      )}
      {endpoint.lastError && (endpoint.failingSince || endpoint.pausedUntil) ? (
        <p class="small">Last error: {endpoint.lastError}</p>
      ) : null}
      {endpoint.failingSince || endpoint.retrying > 0 ? (
        <ChangeForm page={props.page} action={`${sidePath(props.side, 'events')}/retry`} class="actions">
          <input type="hidden" name="endpoint" value={String(endpoint.id)} />
          <button type="submit" aria-label={`Retry now: ${endpoint.url}`}>
            Retry now
          </button>
        </ChangeForm>
      ) : null}
    </li>
  );
}

export const OUTCOME_WORDS: Record<LoggedAttempt['outcome'], string> = {
  delivered: 'Delivered',
  retry: 'Failed, will retry',
  failing: 'Failed, last attempt',
};

function LogLine(props: {
  attempt: LoggedAttempt;
  page: PageContext;
  path: string;
  /** Its endpoint is still the company's. */
  resendable: boolean;
}): VNode {
  const { attempt } = props;
  return (
    <li class="row">
      <div class="grow">
        <div>
          <code>{attempt.type}</code> · attempt {attempt.attempt} ·{' '}
          <span class={`badge ${attempt.outcome === 'delivered' ? 'ok' : 'bad'}`}>
            {OUTCOME_WORDS[attempt.outcome]}
          </span>
        </div>
        <div class="muted small">
          <Moment date={attempt.at} seconds /> · event{' '}
          <a
            href={`${props.path}/${attempt.eventId}`}
            aria-label={`Event ${attempt.eventId}: body and attempts`}
          >
            <code>{attempt.eventId}</code>
          </a>
          {attempt.status !== null ? ` · HTTP ${attempt.status}` : ''} · {attempt.durationMs} ms
        </div>
        <div class="small">To {attempt.url}</div>
        {attempt.error ? <div class="small">{attempt.error}</div> : null}
        {attempt.nextAttemptAt ? (
          <div class="muted small">
            Next attempt after <Moment date={attempt.nextAttemptAt} seconds />
          </div>
        ) : null}
      </div>
      {attempt.outcome === 'delivered' && props.resendable ? (
        <ChangeForm page={props.page} action={`${props.path}/${attempt.eventId}/resend`}>
          <input type="hidden" name="endpoint" value={String(attempt.endpointId)} />
          <button
            type="submit"
            class="secondary"
            aria-label={`Send again: event ${attempt.eventId} to ${attempt.url}`}
          >
            Send again
          </button>
        </ChangeForm>
      ) : null}
    </li>
  );
}

/**
 * The log narrowed to an endpoint, a kind of event, an outcome and a span of time read in the reader's zone; a
 * GET form, so a filtered page can be kept and shared.
 */
function LogFilters(props: { path: string; filter: LogFilter; endpoints: EndpointState[] }): VNode {
  const zone = useReaderZone();
  return (
    <form method="get" action={props.path} class="filters">
      <div>
        <label for="log-endpoint">Endpoint</label>
        <select id="log-endpoint" name="endpoint">
          <option value="">Every endpoint</option>
          {props.endpoints.map((endpoint) => (
            <option
              key={endpoint.id}
              value={String(endpoint.id)}
              selected={props.filter.endpoint === endpoint.id}
            >
              {endpoint.url}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="log-kind">Kind</label>
        <select id="log-kind" name="kind">
          <option value="">Every kind</option>
          {EVENT_KINDS.map((kind) => (
            <option key={kind} value={kind} selected={props.filter.kind === kind}>
              {kind}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="log-outcome">Outcome</label>
        <select id="log-outcome" name="outcome">
          <option value="">Any</option>
          <option value="delivered" selected={props.filter.outcome === 'delivered'}>
            Delivered
          </option>
          <option value="failed" selected={props.filter.outcome === 'failed'}>
            Failed
          </option>
        </select>
      </div>
      <div>
        <label for="log-from">From {zoneWords(zone)}</label>
        <input
          id="log-from"
          name="from"
          type="datetime-local"
          value={props.filter.from ? localField(props.filter.from, zone) : ''}
        />
      </div>
      <div>
        <label for="log-until">Until {zoneWords(zone)}</label>
        <input
          id="log-until"
          name="until"
          type="datetime-local"
          value={props.filter.until ? untilField(props.filter.until, zone) : ''}
        />
      </div>
      <p class="actions">
        <button type="submit" class="secondary">
          Show
        </button>
      </p>
    </form>
  );
}
