import type { VNode } from 'preact';
import { ChangeForm } from '../../foundation/web/change-form.js';
import { describedBy, FieldError } from '../../foundation/web/field-errors.js';
import { TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import type { PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import { MAX_CALLBACK_URL_LENGTH } from '../../rules/companies/callback-address.js';
import type { Company } from '../../rules/companies/companies.js';
import type { EndpointState } from '../../rules/events/delivery-log.js';
import { MAX_ENDPOINTS } from '../../rules/events/endpoints.js';
import type { HeldEvents } from '../../rules/events/held-events.js';
import { CompanyFrame } from './company-frame.js';
import { EndpointBadge, kindsWords, waitingWords } from './endpoint-state.js';
import { type EventSide, sidePath, sideSection } from './event-side.js';

/**
 * `/company/<id>/callback` (docs/design.md sections 6.2 and 11.4): the company's endpoints, the callback
 * addresses Gatelink sends its events to, each with where it stands, the kinds it takes and the events waiting
 * for it, and a form to add one; `/company/<id>/sandbox/callback` the same for its sandbox's events (section
 * 11.9). Each endpoint has a page of its own (endpoint-page.tsx).
 */
export interface CallbackPageProps {
  page: PageContext;
  /** The company whose area this is. */
  company: Company;
  /** Whose endpoints: the company's, or its sandbox's. */
  side: EventSide;
  baseUrl: string;
  endpoints: EndpointState[];
  notice?: string | undefined;
  /** The address typed into the form, kept when it comes back with an error. */
  value?: string;
  errors?: FieldErrors;
  /** Why an endpoint was not added, when no field is to blame (the most there may be). */
  problem?: string;
  /** Events waiting while there is no endpoint: adding the first asks what becomes of them. */
  held?: HeldEvents | null;
  /** The answer to that question, kept when the form comes back with an error. */
  heldChoice?: string;
}

export function CallbackPage(props: CallbackPageProps): VNode {
  const { side, endpoints } = props;
  return (
    <CompanyFrame
      page={props.page}
      company={props.company}
      section={sideSection(side, 'callback')}
      title={side.sandbox ? 'Sandbox callback endpoints' : 'Callback endpoints'}
      notice={props.notice}
      errors={props.errors}
    >
      <section class="card">
        {side.sandbox ? (
          <p>
            Your sandbox's events go to these endpoints, apart from your live ones, each marked{' '}
            <code>"sandbox": true</code>: a local receiver can take them with{' '}
            <code>npm run company -- listen --sandbox</code> too. Back to the <a href={side.base}>sandbox</a>.
          </p>
        ) : null}
        <p>
          Gatelink sends events to each endpoint as they happen, so you need not ask with <code>status</code>.
          Each is a POST of JSON, signed in the Standard Webhooks form twice: <code>v1</code> with the
          endpoint's own signing secret, which the Standard Webhooks libraries verify, and <code>v1a</code>{' '}
          with Gatelink's key, published at <code>{`${props.baseUrl}/.well-known/service.json`}</code>. Up to{' '}
          {MAX_ENDPOINTS} endpoints, each taking the kinds of event you choose.
        </p>
      </section>
      <section class="card" aria-labelledby="endpoints-title">
        <h3 id="endpoints-title">
          {endpoints.length === 0
            ? 'No endpoint yet'
            : `${endpoints.length} ${endpoints.length === 1 ? 'endpoint' : 'endpoints'}`}
        </h3>
        {endpoints.length === 0 ? (
          <p>
            Nothing is sent. Until you add an endpoint, {side.sandbox ? "the sandbox's" : "the company's"}{' '}
            events are kept for about three days and then dropped.
          </p>
        ) : (
          <ul class="list">
            {endpoints.map((endpoint) => (
              <EndpointLine key={endpoint.id} side={side} endpoint={endpoint} />
            ))}
          </ul>
        )}
      </section>
      {props.page.lookOnly ? null : <AddEndpoint {...props} />}
    </CompanyFrame>
  );
}

function EndpointLine(props: { side: EventSide; endpoint: EndpointState }): VNode {
  const { endpoint } = props;
  return (
    <li class="row">
      <div class="grow">
        <p class="address">{endpoint.url}</p>
        <div>
          <EndpointBadge state={endpoint} />
        </div>
        <div class="muted small">
          {kindsWords(endpoint.kinds)} · {waitingWords(endpoint.waiting)}
        </div>
      </div>
      <a href={`${sidePath(props.side, 'callback')}/${endpoint.id}`} aria-label={`Manage ${endpoint.url}`}>
        Manage
      </a>
    </li>
  );
}

/**
 * The form that adds an endpoint, or why none can be added. A company without an endpoint is asked about the
 * events held meanwhile (HeldChoice); one beside others starts with the events written after it.
 */
function AddEndpoint(props: CallbackPageProps): VNode {
  const full = props.endpoints.length >= MAX_ENDPOINTS;
  return (
    <section class="card" id="add" aria-labelledby="add-title">
      <h3 id="add-title">Add an endpoint</h3>
      {props.problem ? (
        <div class="notice error" role="alert">
          <p>{props.problem}</p>
        </div>
      ) : null}
      {full ? (
        props.problem ? null : (
          <p>You have {MAX_ENDPOINTS} endpoints, the most there may be: remove one before adding another.</p>
        )
      ) : (
        <ChangeForm page={props.page} action={sidePath(props.side, 'callback')} novalidate>
          <TextField
            id="callback_url"
            name="callback_url"
            label="Callback address"
            hint="An https address on a public host. Gatelink never follows redirects from it. Its signing secret is shown once, on the next page."
            value={props.value ?? ''}
            errors={props.errors}
            autocomplete="url"
            spellcheck={false}
            maxLength={MAX_CALLBACK_URL_LENGTH}
          />
          {props.held && props.endpoints.length === 0 ? (
            <HeldChoice held={props.held} choice={props.heldChoice} errors={props.errors} />
          ) : null}
          <p class="actions">
            <button type="submit">Add the endpoint</button>
          </p>
        </ChangeForm>
      )}
    </section>
  );
}

/**
 * The first endpoint's question: the events kept while there was none may be days old, and a new receiver may
 * not want them replayed, so the company chooses; nothing is chosen for it.
 */
function HeldChoice(props: {
  held: HeldEvents;
  choice: string | undefined;
  errors: FieldErrors | undefined;
}) {
  const { held, errors } = props;
  const events = held.count === 1 ? '1 event' : `${held.count} events`;
  return (
    <fieldset id="held" aria-describedby={describedBy('held', errors, false)}>
      <legend>
        {events} waiting since <Moment date={held.since} seconds />
      </legend>
      <FieldError errors={errors} field="held" />
      <input type="hidden" name="held_up_to" value={held.upTo} />
      <label class="choice">
        <input type="radio" name="held" value="send" checked={props.choice === 'send'} />
        Send {held.count === 1 ? 'it' : 'them'} to this address too, oldest first
      </label>
      <label class="choice">
        <input type="radio" name="held" value="drop" checked={props.choice === 'drop'} />
        Drop {held.count === 1 ? 'it' : 'them'}: send only events from now on
      </label>
    </fieldset>
  );
}
