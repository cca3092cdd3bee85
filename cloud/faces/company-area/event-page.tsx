import type { VNode } from 'preact';
import { ChangeForm } from '../../foundation/web/change-form.js';
import type { PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { Company } from '../../rules/companies/companies.js';
import type { AttemptRecord, EventAtEndpoint, EventRecord } from '../../rules/events/delivery-log.js';
import { CompanyFrame } from './company-frame.js';
import { type EventSide, sidePath, sideSection } from './event-side.js';
import { OUTCOME_WORDS } from './events-page.js';

/**
 * `/company/<id>/events/<event id>` (docs/design.md sections 6 and 6.2): one event as its endpoints receive it,
 * where it stands at each, the body every attempt sends, and each attempt with its request and the answer that
 * came back: status, headers, the first KiB of the body and the time taken. What a developer needs to see why
 * a delivery failed without logging anything on their own side. Each attempt folds open without a script.
 */
export interface EventPageProps {
  page: PageContext;
  /** The company whose area this is. */
  company: Company;
  /** Whose event: the company's, or its sandbox's (docs/design.md section 11.9). */
  side: EventSide;
  event: EventRecord;
  notice?: { tone: 'ok' | 'error'; text: string } | undefined;
}

export function EventPage(props: EventPageProps): VNode {
  const { event, side } = props;
  const path = sidePath(side, 'events');
  return (
    <CompanyFrame
      page={props.page}
      company={props.company}
      section={sideSection(side, 'events')}
      title={`${side.sandbox ? 'Sandbox event' : 'Event'} ${event.type}`}
    >
      {props.notice ? (
        <div class={`notice ${props.notice.tone}`} role={props.notice.tone === 'ok' ? 'status' : 'alert'}>
          {props.notice.text}
        </div>
      ) : null}
      <p>
        <a href={path}>All events</a>
      </p>
      <section class="card" aria-labelledby="event-title">
        <h3 id="event-title">
          <code>{event.type}</code> <EventBadge event={event} />
        </h3>
        <dl class="facts">
          <dt>Id (webhook-id)</dt>
          <dd>
            <code>{event.id}</code>
          </dd>
          <dt>Happened</dt>
          <dd>
            <Moment date={event.at} seconds />
          </dd>
        </dl>
        <h4 id="stands-title">Where it stands</h4>
        {event.endpoints.length === 0 ? (
          <p>
            Nothing is sent: {side.sandbox ? 'the sandbox has' : 'the company has'} no endpoint.{' '}
            <a href={sidePath(side, 'callback')}>Add one</a> to receive the events from then on.
          </p>
        ) : (
          <ul class="list" aria-labelledby="stands-title">
            {event.endpoints.map((place) => (
              <EndpointPlace
                key={place.endpointId}
                page={props.page}
                path={path}
                event={event}
                place={place}
              />
            ))}
          </ul>
        )}
        <h4>Body</h4>
        <p class="muted small">
          Shown indented; every attempt sends it as one line of JSON, the same bytes each time.
        </p>
        <pre class="payload">{indented(event.body)}</pre>
      </section>
      <section class="card" aria-labelledby="attempts-title">
        <h3 id="attempts-title">Attempts</h3>
        {event.attempts.length === 0 ? (
          <p class="muted">No attempt yet.</p>
        ) : (
          <ul class="list">
            {event.attempts.map((attempt, index) => (
              <li key={attempt.id}>
                <AttemptDetail attempt={attempt} open={index === 0} />
              </li>
            ))}
          </ul>
        )}
      </section>
    </CompanyFrame>
  );
}

/** Where the event stands at one endpoint (docs/design.md section 6.2), and sending it there again. */
function EndpointPlace(props: {
  page: PageContext;
  path: string;
  event: EventRecord;
  place: EventAtEndpoint;
}): VNode {
  const { event, place } = props;
  // Delivered there, or never sent there: either may be sent (again); one on its way is not sent twice.
  const again = place.deliveredAt !== null || !place.sent;
  return (
    <li class="row">
      <div class="grow">
        <p class="address">{place.url}</p>
        <p class="small">
          <PlaceWords event={event} place={place} />
        </p>
      </div>
      {again ? (
        <ChangeForm page={props.page} action={`${props.path}/${event.id}/resend`}>
          <input type="hidden" name="endpoint" value={String(place.endpointId)} />
          <button type="submit" class="secondary" aria-label={`${againWords(place)}: ${place.url}`}>
            {againWords(place)}
          </button>
        </ChangeForm>
      ) : null}
    </li>
  );
}

function againWords(place: EventAtEndpoint): string {
  return place.deliveredAt ? 'Send again' : 'Send it anyway';
}

/** The event's last attempt at an endpoint, newest first as the record lists them. */
function lastAttemptAt(event: EventRecord, endpointId: number): AttemptRecord | undefined {
  return event.attempts.find((attempt) => attempt.endpointId === endpointId);
}

/**
 * The event as a whole: delivered when every endpoint that gets it has it; failed when one gave up on it; not
 * sent when no endpoint gets it.
 */
function EventBadge(props: { event: EventRecord }): VNode {
  const { event } = props;
  const places = event.endpoints.filter((place) => place.sent);
  if (places.length === 0) return <span class="badge">Not sent</span>;
  const waiting = places.filter((place) => place.deliveredAt === null);
  if (waiting.length === 0) return <span class="badge ok">Delivered</span>;
  const last = waiting.map((place) => lastAttemptAt(event, place.endpointId));
  if (last.some((attempt) => attempt?.outcome === 'failing')) return <span class="badge bad">Failed</span>;
  return <span class="badge wait">{last.some(Boolean) ? 'Retrying' : 'Waiting'}</span>;
}

function PlaceWords(props: { event: EventRecord; place: EventAtEndpoint }): VNode {
  const { event, place } = props;
  if (place.deliveredAt) {
    return (
      <>
        Delivered <Moment date={place.deliveredAt} seconds />
      </>
    );
  }
  if (!place.sent) {
    return (
      <>
        Not sent: this endpoint does not take <code>{event.type}</code> events (or was added after). Sending
        it anyway sends this one only.
      </>
    );
  }
  const last = lastAttemptAt(event, place.endpointId);
  if (last?.outcome === 'failing') {
    return <>Not delivered: its last attempt failed. "Retry now" on the events page sends it again.</>;
  }
  if (place.nextAttemptAt && last) {
    return (
      <>
        Not delivered yet; next attempt after <Moment date={place.nextAttemptAt} seconds />
      </>
    );
  }
  return <>On its way</>;
}

function AttemptDetail(props: { attempt: AttemptRecord; open: boolean }): VNode {
  const { attempt } = props;
  return (
    <details open={props.open}>
      <summary>
        Attempt {attempt.attempt} · {OUTCOME_WORDS[attempt.outcome]}
        {attempt.status !== null ? ` · HTTP ${attempt.status}` : ''} · {attempt.durationMs} ms ·{' '}
        <Moment date={attempt.at} seconds />
      </summary>
      {attempt.error ? <p class="small">{attempt.error}</p> : null}
      <h4>Request</h4>
      <p>
        <code>POST {attempt.url}</code>
      </p>
      {attempt.sent ? (
        <HeaderList label="Headers sent" headers={byName(attempt.sent)} />
      ) : (
        <p class="muted small">The headers of attempts this old were not kept.</p>
      )}
      <h4>Answer</h4>
      <Answer attempt={attempt} />
    </details>
  );
}

function Answer(props: { attempt: AttemptRecord }): VNode {
  const { attempt } = props;
  if (attempt.status === null) return <p class="muted small">No answer came.</p>;
  if (!attempt.answer) return <p>HTTP {attempt.status}</p>;
  return (
    <>
      <p>
        HTTP {attempt.status} in {attempt.durationMs} ms
      </p>
      <HeaderList label="Headers received" headers={attempt.answer.headers} />
      {attempt.answer.body === '' && !attempt.answer.cut ? (
        <p class="muted small">No body.</p>
      ) : (
        <>
          <pre class="payload">{attempt.answer.body}</pre>
          {attempt.answer.cut ? <p class="muted small">The first KiB of a longer body.</p> : null}
        </>
      )}
    </>
  );
}

function HeaderList(props: { label: string; headers: readonly (readonly [string, string])[] }): VNode {
  return (
    <dl class="headers" aria-label={props.label}>
      {props.headers.map(([name, value], index) => (
        // A name may come twice (two Set-Cookie headers, say): the place is the key.
        <div key={String(index)}>
          <dt>
            <code>{name}</code>
          </dt>
          <dd>
            <code>{value}</code>
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** The headers sent in the order of their names (the database keeps an object's keys in an order of its own). */
function byName(headers: Record<string, string>): [string, string][] {
  return Object.entries(headers).sort(([a], [b]) => a.toLowerCase().localeCompare(b.toLowerCase()));
}

/** The body as a reader takes it in; kept as it is if it is not JSON (it always is, as the cloud wrote it). */
function indented(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}
