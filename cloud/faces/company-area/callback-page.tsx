import type { VNode } from 'preact';
import type { EventKind } from '../../../shared/company-api/events.js';
import { ChangeForm } from '../../foundation/web/change-form.js';
import { describedBy, FieldError } from '../../foundation/web/field-errors.js';
import { TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import type { PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import { ShownOnce } from '../../foundation/web/shown-once.js';
import { MAX_CALLBACK_URL_LENGTH } from '../../rules/companies/callback-address.js';
import type { Company } from '../../rules/companies/companies.js';
import { CHOOSABLE_KINDS } from '../../rules/events/callback-kinds.js';
import type { HeldEvents } from '../../rules/events/held-events.js';
import type { SigningSecretListing } from '../../rules/events/signing-secrets.js';
import { CompanyFrame } from './company-frame.js';
import { type EventSide, sidePath, sideSection } from './event-side.js';
import { SecretLine, type SecretLineWords } from './secret-line.js';

/**
 * `/company/<id>/callback` (docs/design.md section 11.4): the address Gatelink sends the company's events to,
 * what they are and how they are signed; `/company/<id>/sandbox/callback` the same for its sandbox's events
 * (section 11.9).
 */
export interface CallbackPageProps {
  page: PageContext;
  /** The company whose area this is. */
  company: Company;
  /** Whose callback: the company's, or its sandbox's. */
  side: EventSide;
  baseUrl: string;
  notice?: string | undefined;
  value?: string;
  errors?: FieldErrors;
  /** Events waiting while there is no address: the first save asks what becomes of them. */
  held?: HeldEvents | null;
  /** The answer to that question, kept when the form comes back with an error. */
  heldChoice?: string;
  signing: SigningView;
  /** The kinds as posted, kept when that form comes back with an error. */
  kinds?: KindsChoice;
}

/** The kinds form's answer: every kind, or only those ticked. */
export interface KindsChoice {
  take: 'every' | 'these';
  kinds: readonly string[];
}

/** The signing secrets (signing-secrets.ts) as the page lists them, and one just made, shown this once. */
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

/**
 * The first address's question: the events kept while there was none may be days old, and a new receiver may
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

export function CallbackPage(props: CallbackPageProps): VNode {
  const { side } = props;
  const holder = side.holder;
  const action = sidePath(side, 'callback');
  return (
    <CompanyFrame
      page={props.page}
      company={props.company}
      section={sideSection(side, 'callback')}
      title={side.sandbox ? 'Sandbox callback address' : 'Callback address'}
      notice={props.notice}
      errors={props.errors}
    >
      <section class="card">
        {side.sandbox ? (
          <p>
            Your sandbox's events go here, apart from your live ones, each marked <code>"sandbox": true</code>
            : a local receiver can take them with <code>npm run company -- listen --sandbox</code> too. Back
            to the <a href={side.base}>sandbox</a>.
          </p>
        ) : null}
        <p>
          Gatelink will send events here as they happen, so you need not ask with <code>status</code>. Each is
          a POST of JSON, signed in the Standard Webhooks form twice: <code>v1</code> with your signing secret
          below, which the Standard Webhooks libraries verify, and <code>v1a</code> with Gatelink's key,
          published at <code>{`${props.baseUrl}/.well-known/service.json`}</code>.
        </p>
        {props.page.lookOnly ? (
          <dl class="facts">
            <dt>Callback address</dt>
            <dd>{holder.callback_url ?? 'none: nothing is sent'}</dd>
          </dl>
        ) : null}
        <ChangeForm page={props.page} action={action} novalidate>
          <TextField
            id="callback_url"
            name="callback_url"
            label="Callback address"
            hint="An https address on a public host. Gatelink never follows redirects from it."
            value={props.value ?? holder.callback_url ?? ''}
            errors={props.errors}
            autocomplete="url"
            spellcheck={false}
            maxLength={MAX_CALLBACK_URL_LENGTH}
          />
          {props.held && !holder.callback_url ? (
            <HeldChoice held={props.held} choice={props.heldChoice} errors={props.errors} />
          ) : null}
          <p class="actions">
            <button type="submit">Save address</button>
          </p>
        </ChangeForm>
        {holder.callback_url ? (
          <ChangeForm page={props.page} action={`${action}/remove`} class="actions">
            <button type="submit" class="secondary">
              Remove the address
            </button>
          </ChangeForm>
        ) : null}
      </section>
      <SigningSecrets page={props.page} side={side} signing={props.signing} />
      <Kinds page={props.page} side={side} kinds={props.kinds} errors={props.errors} />
    </CompanyFrame>
  );
}

/**
 * What is sent: every kind, or the kinds ticked, with what each means; a test event always goes. A form that
 * works without script: the radio says whether the ticks count (docs/design.md section 11.4).
 */
function Kinds(props: {
  page: PageContext;
  side: EventSide;
  kinds: KindsChoice | undefined;
  errors: FieldErrors | undefined;
}): VNode {
  const saved = props.side.holder.callback_kinds;
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
      <ChangeForm page={props.page} action={`${sidePath(props.side, 'callback')}/kinds`} novalidate>
        <fieldset aria-describedby={describedBy('kinds', props.errors)}>
          <legend>The kinds of event your callback takes</legend>
          <p class="hint" id="kinds-hint">
            The others are still kept on the Events page for 30 days and streamed to <code>listen</code>, but
            not sent. A kind you stop taking is not sent later either: its events waiting now are passed over.
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
 * The signing secrets: the one in use and a replaced one still signing, each by its last four characters; a new
 * one is shown on the answer that made it and never again. Rotating and expiring ask first, with the script.
 */
function SigningSecrets(props: { page: PageContext; side: EventSide; signing: SigningView }): VNode {
  const { signing } = props;
  const holder = props.side.holder;
  const action = `${sidePath(props.side, 'callback')}/signing-secret`;
  const current = signing.replaces !== 0;
  return (
    <>
      {signing.shown ? (
        <ShownOnce
          id="signing-secret"
          title="Your signing secret"
          label="Signing secret"
          secret={signing.shown}
        >
          <p>
            Copy it now into your receiver's settings, where its Standard Webhooks library reads it: it is
            shown only this once.
          </p>
        </ShownOnce>
      ) : null}
      <section class="card" aria-labelledby="signing-title">
        <h3 id="signing-title">Signing secret</h3>
        {signing.secrets.length === 0 ? (
          <p>
            {holder.callback_url
              ? 'You have no signing secret: your events carry only the v1a signature. Make one to verify them with a Standard Webhooks library.'
              : 'Your first signing secret is made when you save an address, and shown once then.'}
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
        {current || holder.callback_url ? (
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
        ) : null}
      </section>
    </>
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
