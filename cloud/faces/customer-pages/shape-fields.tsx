import type { ComponentChildren, VNode } from 'preact';
import { WEEKDAYS } from '../../../shared/company-api/grant-shape.js';
import { describedBy, FieldError } from '../../foundation/web/field-errors.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { DAY_NAMES } from '../../rules/grant-shapes/shape-words.js';
import { ASK_WAITS, type ShapeChoices } from './shape-form.js';

/**
 * The questions that shape a grant (docs/design.md sections 3.1 and 10.3), one fieldset each: when in the week,
 * from when, how many times. On the consent form and on the page that changes a key's shape. They work without
 * script: the rows of windows are all there (a button adds one more), and app.js only hides what a choice does
 * not need. Times are the barrier's wall-clock times, and the page says in which zone.
 */

export function ShapeFields(props: {
  choices: ShapeChoices;
  zone: string;
  errors: FieldErrors | undefined;
  /** Whom the questions are about: "Demo Cleaning Ltd". */
  company: string;
}): VNode {
  return (
    <>
      <HoursField {...props} />
      <StartField {...props} />
      <OpeningsField {...props} />
      <AskField {...props} />
    </>
  );
}

/**
 * "Ask me before each opening" (docs/design.md section 10.8): each `open` waits for the Allow of whoever may grant,
 * on their phone or on the barrier's page, for as long as chosen here.
 */
function AskField(props: { choices: ShapeChoices; errors: FieldErrors | undefined; company: string }) {
  const { choices, errors } = props;
  return (
    <fieldset id="ask" aria-describedby={describedBy('ask', errors, false)}>
      <legend>Before each opening</legend>
      <FieldError errors={errors} field="ask" />
      <label class="choice">
        <input type="radio" name="ask" value="no" checked={choices.ask === 'no'} />
        {props.company} opens without asking
      </label>
      <label class="choice">
        <input type="radio" name="ask" value="yes" checked={choices.ask === 'yes'} data-reveals="ask-field" />
        Ask me first: each opening waits for my Allow
      </label>
      <div id="ask-field" class="reveal">
        <label for="ask-seconds">Wait for my answer</label>
        <select id="ask-seconds" name="ask_seconds">
          {ASK_WAITS.map((seconds) => (
            <option key={seconds} value={String(seconds)} selected={choices.askSeconds === String(seconds)}>
              {seconds} seconds
            </option>
          ))}
        </select>
        <p class="hint">
          You get a notification with Allow and Deny where you turned notifications on, and the question waits
          on this barrier's page. Without an answer in time, the gate stays shut.
        </p>
      </div>
    </fieldset>
  );
}

function HoursField(props: {
  choices: ShapeChoices;
  zone: string;
  errors: FieldErrors | undefined;
  company: string;
}) {
  const { choices, errors } = props;
  return (
    <fieldset id="hours" aria-describedby={describedBy('hours', errors)}>
      <legend>When may {props.company} open?</legend>
      <p class="hint" id="hours-hint">
        Hours are the barrier's local time ({props.zone}). A window that ends earlier than it starts runs past
        midnight into the next morning.
      </p>
      <FieldError errors={errors} field="hours" />
      <label class="choice">
        <input type="radio" name="hours" value="any" checked={choices.hours === 'any'} />
        At any time
      </label>
      <label class="choice">
        <input
          type="radio"
          name="hours"
          value="windows"
          checked={choices.hours === 'windows'}
          data-reveals="windows"
        />
        Only at these times
      </label>
      <div id="windows" class="reveal">
        {choices.windows.map((window, row) => (
          <WindowRow key={row} row={row} window={window} />
        ))}
        <button type="submit" name="more_windows" value="1" class="secondary" formnovalidate>
          Add another window
        </button>
      </div>
    </fieldset>
  );
}

function WindowRow(props: { row: number; window: ShapeChoices['windows'][number] }) {
  const { row, window } = props;
  const id = (part: string) => `w${row}-${part}`;
  return (
    <fieldset class="window">
      <legend>Window {row + 1}</legend>
      <div class="weekdays">
        {WEEKDAYS.map((day) => (
          <label class="choice day" key={day}>
            <input type="checkbox" name={`w${row}_days`} value={day} checked={window.days.includes(day)} />
            <span aria-hidden="true">{DAY_NAMES[day].slice(0, 3)}</span>
            <span class="visually-hidden">{DAY_NAMES[day]}</span>
          </label>
        ))}
      </div>
      <div class="times">
        <label for={id('from')}>From</label>
        <input type="time" id={id('from')} name={`w${row}_from`} value={window.from} />
        <label for={id('to')}>To</label>
        <input type="time" id={id('to')} name={`w${row}_to`} value={window.to} />
      </div>
    </fieldset>
  );
}

function StartField(props: { choices: ShapeChoices; zone: string; errors: FieldErrors | undefined }) {
  const { choices, errors } = props;
  return (
    <fieldset id="start" aria-describedby={describedBy('start', errors, false)}>
      <legend>From when?</legend>
      <FieldError errors={errors} field="start" />
      <label class="choice">
        <input type="radio" name="start" value="now" checked={choices.start === 'now'} />
        From now
      </label>
      <label class="choice">
        <input
          type="radio"
          name="start"
          value="later"
          checked={choices.start === 'later'}
          data-reveals="start-field"
        />
        From a later day and time
      </label>
      <div id="start-field" class="reveal">
        <p class="hint" id="start-hint">
          The barrier's local time ({props.zone}).
        </p>
        <label for="start-day">Day</label>
        <input
          type="date"
          id="start-day"
          name="start_day"
          value={choices.startDay}
          aria-describedby="start-hint"
        />
        <label for="start-time">Time</label>
        <input
          type="time"
          id="start-time"
          name="start_time"
          value={choices.startTime}
          aria-describedby="start-hint"
        />
      </div>
    </fieldset>
  );
}

function OpeningsField(props: { choices: ShapeChoices; errors: FieldErrors | undefined }) {
  const { choices, errors } = props;
  return (
    <fieldset id="openings" aria-describedby={describedBy('openings', errors, false)}>
      <legend>How many times?</legend>
      <FieldError errors={errors} field="openings" />
      <label class="choice">
        <input type="radio" name="openings" value="any" checked={choices.openings === 'any'} />
        As often as needed
      </label>
      <label class="choice">
        <input type="radio" name="openings" value="one" checked={choices.openings === 'one'} />
        One opening (a single visit)
      </label>
      <label class="choice">
        <input
          type="radio"
          name="openings"
          value="count"
          checked={choices.openings === 'count'}
          data-reveals="openings-field"
        />
        A number of openings in all
      </label>
      <div id="openings-field" class="reveal">
        <label for="openings-count">Number of openings</label>
        <input
          type="text"
          inputMode="numeric"
          id="openings-count"
          name="openings_count"
          value={choices.openingsCount}
          maxLength={4}
          class="short"
        />
      </div>
    </fieldset>
  );
}

/**
 * Enter in a field submits with a form's first submit button, which here would be "Add another window". This
 * one, first in the form and out of sight and of the tab order, makes Enter do what the form's own button does.
 */
export function DefaultSubmit(props: { label: string }): VNode {
  return (
    <button type="submit" class="visually-hidden" tabIndex={-1} aria-hidden="true">
      {props.label}
    </button>
  );
}

/**
 * "Until when?": until withdrawn or until a day (its end at midnight in the barrier's `zone`, as key-lifetime.ts
 * says), after `first`, the
 * choice of the page it is on: the end the company asked for on the consent form, the key's own end when it is
 * changed.
 */
export function LifetimeField(props: {
  lifetime: string;
  until: string;
  today: string;
  /** The barrier's time zone, where the day ends. */
  zone: string;
  errors: FieldErrors | undefined;
  first?: ComponentChildren;
}): VNode {
  const { errors } = props;
  return (
    <fieldset id="lifetime" aria-describedby={describedBy('lifetime', errors, false)}>
      <legend>Until when?</legend>
      <FieldError errors={errors} field="lifetime" />
      {props.first}
      <label class="choice">
        <input type="radio" name="lifetime" value="withdrawn" checked={props.lifetime === 'withdrawn'} />
        Until I withdraw it
      </label>
      <label class="choice">
        <input
          type="radio"
          name="lifetime"
          value="date"
          checked={props.lifetime === 'date'}
          data-reveals="until-field"
        />
        Until a date
      </label>
      <div id="until-field" class="reveal">
        <label for="until">Last day of access</label>
        <p class="hint" id="until-hint">
          Access ends at midnight at the end of that day, the barrier's time ({props.zone}). You can still
          withdraw it earlier.
        </p>
        <FieldError errors={errors} field="until" />
        <input
          type="date"
          id="until"
          name="until"
          min={props.today}
          value={props.until}
          aria-describedby={describedBy('until', errors)}
        />
      </div>
    </fieldset>
  );
}

/**
 * Choices that give more than the company asked for are never granted silently: the form comes back saying
 * how, and the customer ticks that they mean it (docs/design.md section 10.3). Nothing when nothing is wider.
 */
export function WiderConfirmation(props: {
  company: string;
  wider: string[] | undefined;
  errors: FieldErrors | undefined;
}): VNode | null {
  if (!props.wider || props.wider.length === 0) return null;
  return (
    <fieldset id="wider" aria-describedby={describedBy('wider', props.errors, false)}>
      <legend>More than {props.company} asked for</legend>
      <FieldError errors={props.errors} field="wider" />
      <ul>
        {props.wider.map((part) => (
          <li key={part}>{part}</li>
        ))}
      </ul>
      <label class="choice">
        <input type="checkbox" name="wider_ok" value="1" />
        <span>Yes, give {props.company} more than they asked for</span>
      </label>
    </fieldset>
  );
}
