import type { VNode } from 'preact';
import { describedBy, FieldError } from '../../foundation/web/field-errors.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import { capitalised, Moment, useReaderZone } from '../../foundation/web/readable-time.js';
import { lifetimeText } from '../../rules/access-keys/key-lifetime.js';
import type { KeyOnBarrier } from '../../rules/access-keys/keys-on-barrier.js';
import type { CompanyDisplay } from '../../rules/companies/display.js';
import type { BarrierObject, CustomerBarrier } from '../../rules/devices/customer-barriers.js';
import { KeyShapeText, keyShapeLines } from './key-shape.js';
import { DefaultSubmit, LifetimeField, ShapeFields, WiderConfirmation } from './shape-fields.js';
import type { ShapeChoices } from './shape-form.js';

/**
 * The consent dialog (docs/design.md section 10.3), a "check your answers" page: the company again (above it,
 * on the request page), then what it may open and for how long, then one button. A key opens one barrier, so
 * the objects are grouped by barrier and the barrier is the one whose objects are ticked; it works without
 * script, which only hides the date field until "until a date" is chosen. Its problems are summed up at the top
 * of the page (request-page.tsx), and each is said again beside its field.
 */
export interface ConsentChoices {
  barriers: { barrier: CustomerBarrier; objects: BarrierObject[] }[];
  /** Who shares barriers with the reader to look only, said when there is none to grant on (section 9.2). */
  lookOnly?: string[];
  /** The objects ticked (number ids). */
  objects: number[];
  /** `proposed`: the end the company asked for, offered when it asked for one. */
  lifetime: 'withdrawn' | 'date' | 'proposed';
  /** The last day, `YYYY-MM-DD`, as typed. */
  until: string;
  /** The earliest day the date field offers, `YYYY-MM-DD`. */
  today: string;
  /** When in the week, from when, how many times (docs/design.md section 3.1), as typed or proposed. */
  shape: ShapeChoices;
  /** The zone its hours are in: the barrier's, or the customer's first barrier's until one is ticked. */
  zone: string;
  /** What the company asked for, in words, and the end it asked for; null when it asked for nothing. */
  proposal: { words: string[]; endsAt: Date | null } | null;
  /** How the choices give more than was asked for, when the customer has not said yet that they mean it. */
  wider?: string[];
  /** The customer ticked "give more than they asked for". */
  widerOk?: boolean;
  errors?: FieldErrors;
}

export function ConsentForm(props: {
  page: PageContext;
  code: string;
  company: CompanyDisplay;
  choices: ConsentChoices;
}): VNode {
  const { choices, company, code } = props;
  const { errors } = choices;
  if (choices.barriers.length === 0 && choices.lookOnly?.length) {
    return <LookOnly page={props.page} code={code} company={company} sharedBy={choices.lookOnly} />;
  }
  if (choices.barriers.length === 0) {
    return (
      <section class="card" aria-labelledby="consent-title">
        <h2 id="consent-title">Add your barrier first</h2>
        <p>
          You have no barrier in Gatelink yet. Add it with the pairing code of its controller, then you come
          back here to choose what {company.name} may open.
        </p>
        <p class="actions">
          <a class="button" href={`/barriers?next=/c/${code}`}>
            Add a barrier
          </a>
          <DeclineButton />
        </p>
        <DeclineHint company={company} />
        <DeclineForm page={props.page} code={code} company={company} />
        <ReleaseForm page={props.page} code={code} />
      </section>
    );
  }
  const several = choices.barriers.length > 1;
  return (
    <section class="card" aria-labelledby="consent-title">
      <h2 id="consent-title">Give {company.name} access</h2>
      {choices.proposal ? <Proposal company={company} words={choices.proposal.words} /> : null}
      <form method="post" action={`/c/${code}/grant`} novalidate>
        <CsrfField page={props.page} />
        <DefaultSubmit label="Grant access" />
        <fieldset id="objects" aria-describedby={describedBy('objects', errors)}>
          <legend>What may {company.name} open?</legend>
          <p class="hint" id="objects-hint">
            {several
              ? 'Tick what they may open. Access covers one barrier: tick objects of one barrier only.'
              : 'Tick what they may open.'}
          </p>
          <FieldError errors={errors} field="objects" />
          {choices.barriers.map(({ barrier, objects }) => (
            <div class="barrier-choice" key={barrier.id}>
              <p class="barrier-name">
                {barrier.name}{' '}
                <span class={`badge ${barrier.online ? 'ok' : 'bad'}`}>
                  {barrier.online ? 'Online' : 'Offline'}
                </span>
              </p>
              {objects.length === 0 ? (
                <p class="muted">Its controller reports nothing to open yet.</p>
              ) : (
                objects.map((object) => (
                  <label class="choice" key={object.numberId}>
                    <input
                      type="checkbox"
                      name="object"
                      value={String(object.numberId)}
                      checked={choices.objects.includes(object.numberId)}
                    />
                    {object.label}
                  </label>
                ))
              )}
            </div>
          ))}
        </fieldset>
        <ShapeFields choices={choices.shape} zone={choices.zone} errors={errors} company={company.name} />
        <LifetimeField
          lifetime={choices.lifetime}
          until={choices.until}
          today={choices.today}
          zone={choices.zone}
          errors={errors}
          first={
            choices.proposal?.endsAt ? (
              <label class="choice">
                <input
                  type="radio"
                  name="lifetime"
                  value="proposed"
                  checked={choices.lifetime === 'proposed'}
                />
                <span>
                  Until the end they asked for, <Moment date={choices.proposal.endsAt} />
                </span>
              </label>
            ) : null
          }
        />
        <WiderConfirmation company={company.name} wider={choices.wider} errors={errors} />
        <p class="actions sticky">
          <button type="submit">Grant access</button>
          <DeclineButton />
        </p>
        <DeclineHint company={company} />
      </form>
      <DeclineForm page={props.page} code={code} company={company} />
      <ReleaseForm page={props.page} code={code} />
    </section>
  );
}

/**
 * For a member who may only look, with no barrier of their own to grant on: why there is nothing to tick, and
 * the ways on, passing the request to someone who may grant (the form below, handover-form.tsx) or releasing it.
 */
function LookOnly(props: {
  page: PageContext;
  code: string;
  company: CompanyDisplay;
  sharedBy: string[];
}): VNode {
  const { company } = props;
  const owners = new Intl.ListFormat('en').format(props.sharedBy);
  return (
    <section class="card" aria-labelledby="consent-title">
      <h2 id="consent-title">You can look, not grant</h2>
      <p>
        You may only look at what {owners} {props.sharedBy.length === 1 ? 'shares' : 'share'} with you, so you
        cannot give {company.name} access to it. Pass this request to someone who may grant, below, or release
        it so that they can take it.
      </p>
      <p class="actions">
        <DeclineButton />
      </p>
      <DeclineHint company={company} />
      <DeclineForm page={props.page} code={props.code} company={company} />
      <ReleaseForm page={props.page} code={props.code} />
    </section>
  );
}

/**
 * Decline is a form of its own, `POST /c/<code>/decline`, since forms do not nest; its button stands beside
 * Grant and belongs to it by the `form` attribute, which needs no script. It ends the request, so it asks first
 * (`data-confirm`, app.js); without script the click is the answer.
 */
const DECLINE_FORM = 'decline-form';

function DeclineForm(props: { page: PageContext; code: string; company: CompanyDisplay }): VNode {
  return (
    <form
      id={DECLINE_FORM}
      method="post"
      action={`/c/${props.code}/decline`}
      data-confirm={`Decline the request from ${props.company.name}?`}
    >
      <CsrfField page={props.page} />
    </form>
  );
}

function DeclineButton(): VNode {
  return (
    <button type="submit" form={DECLINE_FORM} class="secondary">
      Decline
    </button>
  );
}

function DeclineHint(props: { company: CompanyDisplay }): VNode {
  return (
    <p class="hint">
      Declining tells {props.company.name} only that you said no, nothing about you or your barriers. It ends
      this request: to give access later, ask them for a new code.
    </p>
  );
}

/**
 * Release, `POST /c/<code>/release`: whoever pressed Continue while signed in with the wrong account lets the
 * request go, and it waits again for the right one (docs/design.md section 10.3). Nothing ends, so it asks
 * nothing first.
 */
function ReleaseForm(props: { page: PageContext; code: string }): VNode {
  return (
    <form method="post" action={`/c/${props.code}/release`} class="release">
      <CsrfField page={props.page} />
      <p class="hint" id="release-hint">
        Not the right account? Release it, then sign in with the right one and open the link again.
      </p>
      <p class="actions">
        <button type="submit" class="secondary" aria-describedby="release-hint">
          Release this request
        </button>
      </p>
    </form>
  );
}

/** What the company asked for, before the questions: the form starts from it, and may give less. */
function Proposal(props: { company: CompanyDisplay; words: string[] }): VNode {
  return (
    <div class="proposal">
      <p>{props.company.name} asks for access:</p>
      <ul>
        {props.words.map((line) => (
          <li key={line}>{line}</li>
        ))}
      </ul>
      <p class="hint">
        The questions below start from that. You can give less; to give more, you are asked again.
      </p>
    </div>
  );
}

/** The confirmation: company, barrier, objects and lifetime, and where to see or withdraw it later. */
export function GrantedAccess(props: {
  company: CompanyDisplay;
  granted: KeyOnBarrier & { barrier: { id: string; name: string } | null };
  justGranted: boolean;
}): VNode {
  const { granted, company } = props;
  const zone = useReaderZone();
  return (
    <section class="card" aria-labelledby="granted-title">
      {props.justGranted ? (
        <div class="notice ok" role="status">
          Access granted. {company.name} can now open what you chose.
        </div>
      ) : null}
      <h2 id="granted-title">The access you gave</h2>
      <dl class="facts">
        <dt>Company</dt>
        <dd>{company.name}</dd>
        <dt>Barrier</dt>
        <dd>{granted.barrier ? granted.barrier.name : 'A barrier that is no longer yours'}</dd>
        <dt>May open</dt>
        <dd>{granted.objects.map((object) => object.label).join(', ')}</dd>
        {keyShapeLines(granted).length > 0 ? (
          <>
            <dt>When</dt>
            <dd>
              <KeyShapeText shape={granted} />
            </dd>
          </>
        ) : null}
        <dt>For how long</dt>
        <dd>
          {granted.revokedAt ? (
            <>
              Withdrawn on <Moment date={granted.revokedAt} />
            </>
          ) : granted.expired ? (
            <>Ended ({lifetimeText(granted.expiresAt, zone, granted.timeZone)})</>
          ) : (
            capitalised(lifetimeText(granted.expiresAt, zone, granted.timeZone))
          )}
        </dd>
        <dt>Granted on</dt>
        <dd>
          <Moment date={granted.issuedAt} />
        </dd>
      </dl>
      {granted.barrier ? (
        <p>
          <a href={`/barriers/${granted.barrier.id}`}>
            See {granted.barrier.name} and the companies with access
          </a>
        </p>
      ) : null}
    </section>
  );
}
