import type { VNode } from 'preact';
import type { EventKind } from '../../../shared/company-api/events.js';
import { ChangeForm } from '../../foundation/web/change-form.js';
import { describedBy, FieldError } from '../../foundation/web/field-errors.js';
import { TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import type { PageContext } from '../../foundation/web/page.js';
import { ShownOnce } from '../../foundation/web/shown-once.js';
import { MAX_CALLBACK_URL_LENGTH } from '../../rules/companies/callback-address.js';
import type { Company } from '../../rules/companies/companies.js';
import { CHOOSABLE_KINDS } from '../../rules/events/callback-kinds.js';
import type { EndpointState } from '../../rules/events/delivery-log.js';
import type { SigningSecretListing } from '../../rules/events/signing-secrets.js';
import { CompanyFrame } from './company-frame.js';
import { EndpointBadge, waitingWords } from './endpoint-state.js';
import { type EventSide, sidePath, sideSection } from './event-side.js';
import { SecretLine, type SecretLineWords } from './secret-line.js';

/**
 * `/company/<id>/callback/<endpoint id>` (docs/design.md sections 6.2 and 11.4): one endpoint of the company,
 * its address, its signing secrets, the kinds of event it takes, and removing it; under
 * `/company/<id>/sandbox/callback/` the same for the sandbox's endpoints (section 11.9).
 */
export interface EndpointPageProps {
  page: PageContext;
  /** The company whose area this is. */
  company: Company;
  /** Whose endpoint: the company's, or its sandbox's. */
  side: EventSide;
  endpoint: EndpointState;
  notice?: string | undefined;
  /** The address as posted, kept when the form comes back with an error. */
  value?: string;
  errors?: FieldErrors;
  signing: SigningView;
  /** The kinds as posted, kept when that form comes back with an error. */
  kinds?: KindsChoice;
}

/** The kinds form's answer: every kind, or only those ticked. */
export interface KindsChoice {
  take: 'every' | 'these';
  kinds: readonly string[];
}

/** The endpoint's signing secrets (signing-secrets.ts) as the page lists them, and one just made, shown once. */
export interface SigningView {
  secrets: SigningSecretListing[];
  /** The one in use, which a rotation form names (0: none). */
  replaces: number;
  now: Date;
  shown?: string;
  problem?: string;
}

/** A line for every kind the cloud sends (shared/company-api/events.ts): the type leaves none out. */
const EVENT_WORDS: Record<EventKind, string> = {
  'request.claimed': 'a customer opened your request',
  'request.issued': 'a customer granted access: the key and its objects',
  'request.revoked': 'a customer withdrew access',
  'request.expired': 'a request ran out unanswered',
  'request.declined': 'a customer said no to your request',
  'request.released': 'a customer let your request go; it waits again for a customer',
  'key.expired': "a key's lifetime ended",
  'open.succeeded': 'an opening the controller confirmed',
  'open.failed': 'an opening refused or failed, with its reason',
  'open.gate_opened': 'the gate of an opening seen open (barriers with a position sensor)',
  'open.gate_closed': 'that gate seen closed again, and how long it was open',
  'open.gate_not_moved': 'the relay fired but the gate did not move',
  'gate.left_open': 'a gate you opened has stayed open past the customer’s limit',
  'gate.closed': 'that gate closed at last',
  ping: 'a test event, when a member presses Send a test event on the Events page',
};

/** Where an endpoint's page and forms are. */
export function endpointPath(side: EventSide, endpointId: number): string {
  return `${sidePath(side, 'callback')}/${endpointId}`;
}

export function EndpointPage(props: EndpointPageProps): VNode {
  const { side, endpoint } = props;
  const action = endpointPath(side, endpoint.id);
  return (
    <CompanyFrame
      page={props.page}
      company={props.company}
      section={sideSection(side, 'callback')}
      title={side.sandbox ? 'Sandbox callback endpoint' : 'Callback endpoint'}
      notice={props.notice}
      errors={props.errors}
    >
      <p>
        <a href={sidePath(side, 'callback')}>All endpoints</a>
      </p>
      {props.signing.shown ? (
        <ShownOnce
          id="signing-secret"
          title="This endpoint's signing secret"
          label="Signing secret"
          secret={props.signing.shown}
        >
          <p>
            Copy it now into your receiver's settings, where its Standard Webhooks library reads it: it is
            shown only this once, and signs only this endpoint's events.
          </p>
        </ShownOnce>
      ) : null}
      <section class="card" aria-labelledby="address-title">
        <h3 id="address-title">Address</h3>
        <p class="address">{endpoint.url}</p>
        <p>
          <EndpointBadge state={endpoint} />
        </p>
        {endpoint.lastError && (endpoint.failingSince || endpoint.pausedUntil) ? (
          <p class="small">Last error: {endpoint.lastError}</p>
        ) : null}
        <p class="small">
          {waitingWords(endpoint.waiting)}.{' '}
          <a href={`${sidePath(side, 'events')}?endpoint=${endpoint.id}`}>Its deliveries</a>
        </p>
        <ChangeForm page={props.page} action={action} novalidate>
          <TextField
            id="callback_url"
            name="callback_url"
            label="Change the address"
            hint="An https address on a public host. The endpoint keeps its signing secrets, its kinds and the events waiting for it."
            value={props.value ?? endpoint.url}
            errors={props.errors}
            autocomplete="url"
            spellcheck={false}
            maxLength={MAX_CALLBACK_URL_LENGTH}
          />
          <p class="actions">
            <button type="submit">Save the address</button>
          </p>
        </ChangeForm>
      </section>
      <SigningSecrets page={props.page} action={`${action}/signing-secret`} signing={props.signing} />
      <Kinds
        page={props.page}
        action={`${action}/kinds`}
        saved={endpoint.kinds}
        kinds={props.kinds}
        errors={props.errors}
      />
      {props.page.lookOnly ? null : (
        <section class="card" aria-labelledby="remove-title">
          <h3 id="remove-title">Remove the endpoint</h3>
          <p>
            Events stop going to it at once, and those waiting for it are not sent to it. Its attempts stay in
            the delivery log for 30 days.
          </p>
          <ChangeForm
            page={props.page}
            action={`${action}/remove`}
            data-confirm={`Remove the endpoint ${endpoint.url}? Events stop going to it at once.`}
          >
            <button type="submit" class="danger">
              Remove the endpoint
            </button>
          </ChangeForm>
        </section>
      )}
    </CompanyFrame>
  );
}

/**
 * What is sent: every kind, or the kinds ticked, with what each means; a test event always goes. A form that
 * works without script: the radio says whether the ticks count (docs/design.md section 11.4).
 */
function Kinds(props: {
  page: PageContext;
  action: string;
  /** The kinds the endpoint takes; null for every kind. */
  saved: readonly string[] | null;
  kinds: KindsChoice | undefined;
  errors: FieldErrors | undefined;
}): VNode {
  const { saved } = props;
  const choice: KindsChoice = props.kinds ?? {
    take: saved === null ? 'every' : 'these',
    kinds: saved ?? CHOOSABLE_KINDS,
  };
  const line = (kind: EventKind) => (
    <>
      <code>{kind}</code>: {EVENT_WORDS[kind]}
    </>
  );
  if (props.page.lookOnly) {
    return (
      <section class="card" id="kinds" aria-labelledby="kinds-title">
        <h3 id="kinds-title">What is sent</h3>
        <p>{saved === null ? 'Every kind of event:' : 'Only these kinds of event, and test events:'}</p>
        <ul>
          {(saved === null ? CHOOSABLE_KINDS : CHOOSABLE_KINDS.filter((kind) => saved.includes(kind))).map(
            (kind) => (
              <li key={kind}>{line(kind)}</li>
            ),
          )}
        </ul>
      </section>
    );
  }
  return (
    <section class="card" id="kinds" aria-labelledby="kinds-title">
      <h3 id="kinds-title">What is sent</h3>
      <ChangeForm page={props.page} action={props.action} novalidate>
        <fieldset aria-describedby={describedBy('kinds', props.errors)}>
          <legend>The kinds of event this endpoint takes</legend>
          <p class="hint" id="kinds-hint">
            The others are still kept on the Events page for 30 days, streamed to <code>listen</code> and sent
            to your other endpoints that take them, but not sent here. A kind you stop taking is not sent
            later either: its events waiting now are passed over.
          </p>
          <FieldError errors={props.errors} field="kinds" />
          <label class="choice">
            <input type="radio" name="take" value="every" checked={choice.take === 'every'} />
            Every kind, and the kinds Gatelink adds later
          </label>
          <label class="choice">
            <input type="radio" name="take" value="these" checked={choice.take === 'these'} />
            Only the kinds ticked below
          </label>
          <ul class="kinds">
            {CHOOSABLE_KINDS.map((kind) => (
              <li key={kind}>
                <label class="choice">
                  <input type="checkbox" name="kinds" value={kind} checked={choice.kinds.includes(kind)} />
                  <span>{line(kind)}</span>
                </label>
              </li>
            ))}
          </ul>
          <p class="hint">
            <code>ping</code>: {EVENT_WORDS.ping}, always sent.
          </p>
        </fieldset>
        <p class="actions">
          <button type="submit">Save the kinds</button>
        </p>
      </ChangeForm>
    </section>
  );
}

/**
 * The endpoint's signing secrets: the one in use and a replaced one still signing, each by its last four
 * characters; a new one is shown on the answer that made it and never again. Rotating and expiring ask first,
 * with the script.
 */
function SigningSecrets(props: { page: PageContext; action: string; signing: SigningView }): VNode {
  const { signing, action } = props;
  const current = signing.replaces !== 0;
  return (
    <section class="card" aria-labelledby="signing-title">
      <h3 id="signing-title">Signing secret</h3>
      {signing.secrets.length === 0 ? (
        <p>
          This endpoint has no signing secret: its events carry only the v1a signature. Make one to verify
          them with a Standard Webhooks library.
        </p>
      ) : (
        <ul class="list">
          {signing.secrets.map((secret) => (
            <SecretLine
              key={secret.id}
              secret={secret}
              now={signing.now}
              page={props.page}
              words={signingWords(action)}
            />
          ))}
        </ul>
      )}
      {signing.problem ? (
        <div class="notice error" role="alert">
          <p>{signing.problem}</p>
        </div>
      ) : null}
      <ChangeForm
        page={props.page}
        action={action}
        {...(current
          ? {
              'data-confirm':
                'Rotate the signing secret? The new one is shown once; events are signed with both for 24 hours.',
            }
          : {})}
      >
        <input type="hidden" name="replaces" value={String(signing.replaces)} />
        <p class="hint">
          {current
            ? 'Events are signed with the new secret and the current one for 24 hours, so that your receiver can move over without refusing any.'
            : 'The secret is shown once, on the next page: have your receiver’s settings open.'}
        </p>
        <p class="actions">
          <button type="submit">{current ? 'Rotate the signing secret' : 'Make a signing secret'}</button>
        </p>
      </ChangeForm>
    </section>
  );
}

/** A signing secret's line: its end stops the deliveries' signatures under it. */
function signingWords(action: string): SecretLineWords {
  return {
    prefix: 'whsec_',
    made: 'Made',
    until: 'signs until',
    seconds: true,
    expireAction: (secret) => `${action}/${secret.id}/expire`,
    confirm: (secret) =>
      `Stop signing with the old secret …${secret.hint} now? A receiver still using it refuses events from then on.`,
    hint: 'if it may have leaked, once your receiver uses the new one',
  };
}
