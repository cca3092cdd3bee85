import type { VNode } from 'preact';
import { describedBy, ErrorSummary, FieldError } from '../../foundation/web/field-errors.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import { durationWords } from '../../rules/journal/gate-story.js';
import {
  type GateLimits,
  isLeftOpen,
  LEFT_OPEN_MINUTES,
  MOVE_TIMEOUT_SECONDS,
  type SensedObject,
} from '../../rules/positions/gate-display.js';

/**
 * A barrier's gates as their sensors see them (docs/design.md section 10.4): each sensed object's position now
 * and since when, and the form that sets when a gate counts as left open and when an opening counts as "gate
 * did not move". The form is a plain POST that works without script.
 */
export interface GateLimitsForm {
  /** What the fields hold: the saved values, or what was typed when it was refused. */
  leftOpenMinutes: string;
  moveTimeoutSeconds: string;
  errors?: FieldErrors;
}

/** The form's fields as the saved limits fill them. */
export function savedLimitsForm(limits: GateLimits): GateLimitsForm {
  return {
    leftOpenMinutes: String(Math.round(limits.leftOpenLimitS / 60)),
    moveTimeoutSeconds: String(limits.moveTimeoutS),
  };
}

/** "Main gate: closed since …", "open for 12 min, longer than your limit of 10 min", or not reported yet. */
export function GatePositionLine(props: { object: SensedObject; limits: GateLimits; now: Date }): VNode {
  const { object, limits, now } = props;
  if (object.position === null || object.since === null) {
    return (
      <p class="gate-position">
        {object.label}: <span class="muted">position not reported yet</span>
      </p>
    );
  }
  if (object.position === 'closed') {
    return (
      <p class="gate-position">
        {object.label}: <span class="badge ok">Closed</span> since <Moment date={object.since} />
      </p>
    );
  }
  const openFor = durationWords(now.getTime() - object.since.getTime());
  const late = isLeftOpen(object, limits, now);
  return (
    <p class={late ? 'gate-position gate-alert' : 'gate-position'}>
      {object.label}: <span class={`badge ${late ? 'bad' : 'wait'}`}>Open</span> for {openFor} (since{' '}
      <Moment date={object.since} />)
      {late ? (
        <strong>, longer than your limit of {durationWords(limits.leftOpenLimitS * 1000)}</strong>
      ) : null}
    </p>
  );
}

/** The barrier's gates as their sensors see them now; nothing when it has no sensor. */
export function GatePositions(props: {
  objects: SensedObject[];
  limits: GateLimits;
  now: Date;
}): VNode | null {
  if (props.objects.length === 0) return null;
  return (
    <section class="card" aria-labelledby="gates-title">
      <h2 id="gates-title">Gate position</h2>
      {props.objects.map((object) => (
        <GatePositionLine key={object.numberId} object={object} limits={props.limits} now={props.now} />
      ))}
    </section>
  );
}

/** The limits' form, with the values saved (or as typed, when refused). */
export function GateLimitsCard(props: {
  page: PageContext;
  barrierId: string;
  sensed: boolean;
  form: GateLimitsForm;
}): VNode {
  const { form } = props;
  return (
    <section class="card" aria-labelledby="limits-title">
      <h2 id="limits-title">Gate alerts</h2>
      {props.sensed ? null : (
        <p class="muted">
          These need a position sensor on the gate, and its controller reports none yet. With one, this page
          shows whether the gate is open, and the journal when it opened and closed.
        </p>
      )}
      <ErrorSummary errors={form.errors} />
      <form method="post" action={`/barriers/${props.barrierId}/gate-limits`} novalidate>
        <CsrfField page={props.page} />
        <NumberField
          id="left_open_minutes"
          before="Tell me when the gate stays open longer than"
          after="minutes"
          hint={`From ${LEFT_OPEN_MINUTES.min} to ${LEFT_OPEN_MINUTES.max} (a day); ${LEFT_OPEN_MINUTES.default} unless you change it. Your list of barriers then shows the gate left open, and the company whose opening left it open is told.`}
          value={form.leftOpenMinutes}
          errors={form.errors}
        />
        <NumberField
          id="move_timeout_seconds"
          before="Mark an opening as “gate did not move” after"
          after="seconds"
          hint={`From ${MOVE_TIMEOUT_SECONDS.min} to ${MOVE_TIMEOUT_SECONDS.max}; ${MOVE_TIMEOUT_SECONDS.default} unless you change it. Counted from the relay firing: allow for a slow gate.`}
          value={form.moveTimeoutSeconds}
          errors={form.errors}
        />
        <p class="actions">
          <button type="submit" class="secondary">
            Save alerts
          </button>
        </p>
      </form>
    </section>
  );
}

/**
 * A whole number typed in the middle of a sentence: the words before it are its label, the unit after it is
 * part of the label too (aria-labelledby), so a screen reader says the whole sentence. A text input with a
 * numeric keyboard, as GOV.UK advises, since `type=number` changes its value under a scrolling wheel.
 */
function NumberField(props: {
  id: string;
  before: string;
  after: string;
  hint: string;
  value: string;
  errors: FieldErrors | undefined;
}): VNode {
  const { id } = props;
  return (
    <div class="number-field">
      <label for={id} id={`${id}-label`}>
        {props.before}
      </label>
      <p class="hint" id={`${id}-hint`}>
        {props.hint}
      </p>
      <FieldError errors={props.errors} field={id} />
      <div class="number-line">
        <input
          type="text"
          id={id}
          name={id}
          value={props.value}
          inputMode="numeric"
          maxLength={5}
          autocomplete="off"
          aria-labelledby={`${id}-label ${id}-unit`}
          aria-describedby={describedBy(id, props.errors)}
          aria-invalid={props.errors?.[id] ? 'true' : undefined}
        />{' '}
        <span id={`${id}-unit`}>{props.after}</span>
      </div>
    </div>
  );
}
