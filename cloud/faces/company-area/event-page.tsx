import type { VNode } from 'preact';
import { ChangeForm } from '../../foundation/web/change-form.js';
import type { PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { Company } from '../../rules/companies/companies.js';
import type { AttemptRecord, EventRecord } from '../../rules/events/delivery-log.js';
import { CompanyFrame } from './company-frame.js';
import { type EventSide, sidePath, sideSection } from './event-side.js';
import { OUTCOME_WORDS } from './events-page.js';

/**
 * `/company/<id>/events/<event id>` (docs/design.md section 6): one event as its endpoint receives it, the body
 * every attempt sends, and each attempt with its request and the answer that came back: status, headers, the
 * first KiB of the body and the time taken. What a developer needs to see why a delivery failed without
 * logging anything on their own side. Each attempt folds open without a script.
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
  const { event } = props;
  const path = sidePath(props.side, 'events');
  return (
    <CompanyFrame
      page={props.page}
      company={props.company}
      section={sideSection(props.side, 'events')}
      title={`${props.side.sandbox ? 'Sandbox event' : 'Event'} ${event.type}`}
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
          <dt>Delivery</dt>
          <dd>
            <DeliveryWords event={event} />
          </dd>
        </dl>
        {event.deliveredAt || !event.toCallback ? (
          <ChangeForm page={props.page} action={`${path}/${event.id}/resend`}>
            <button type="submit" class="secondary">
              {event.deliveredAt ? 'Send again' : 'Send it anyway'}
            </button>
          </ChangeForm>
        ) : null}
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

function EventBadge(props: { event: EventRecord }): VNode {
  const { event } = props;
  if (event.deliveredAt) return <span class="badge ok">Delivered</span>;
  if (!event.toCallback) return <span class="badge">Not sent</span>;
  const last = event.attempts[0];
  if (last?.outcome === 'failing') return <span class="badge bad">Failed</span>;
  return <span class="badge wait">{last ? 'Retrying' : 'Waiting'}</span>;
}

function DeliveryWords(props: { event: EventRecord }): VNode {
  const { event } = props;
  if (event.deliveredAt) {
    return (
      <>
        Delivered <Moment date={event.deliveredAt} seconds />
      </>
    );
  }
  if (!event.toCallback) {
    return (
      <>
        Not sent: your callback does not take <code>{event.type}</code> events (the kinds it takes are on the
        Callback page). Sending it anyway sends this one only.
      </>
    );
  }
  if (event.attempts[0]?.outcome === 'failing') {
    return <>Not delivered: its last attempt failed. "Retry now" on the events page sends it again.</>;
  }
  if (event.nextAttemptAt && event.attempts.length > 0) {
    return (
      <>
        Not delivered yet; next attempt after <Moment date={event.nextAttemptAt} seconds />
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
