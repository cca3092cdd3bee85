import type { VNode } from 'preact';
import { describedBy, FieldError } from '../../foundation/web/field-errors.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import type { Companion } from '../../rules/households/companions.js';

/**
 * "Ask someone else to answer", `POST /c/<code>/hand-over` (docs/design.md section 9.2): the holder of a claimed
 * request passes it to someone they share a barrier with, who may grant on it. Shown only when there is someone;
 * the request stays claimed and lapses when it would have.
 */
export function HandoverForm(props: {
  page: PageContext;
  code: string;
  companions: readonly Companion[];
  errors?: FieldErrors | undefined;
}): VNode | null {
  if (props.companions.length === 0) return null;
  return (
    <section class="card" aria-labelledby="handover-title">
      <h2 id="handover-title">Ask someone else to answer</h2>
      <form method="post" action={`/c/${props.code}/hand-over`}>
        <CsrfField page={props.page} />
        <label for="to">Pass this request to</label>
        <p class="hint" id="to-hint">
          Someone who shares one of your barriers and may grant on it. We e-mail them a link; they answer in
          your place, and you can no longer answer it.
        </p>
        <FieldError errors={props.errors} field="to" />
        <select id="to" name="to" aria-describedby={describedBy('to', props.errors)}>
          {props.companions.map((companion) => (
            <option key={companion.customerId} value={String(companion.customerId)}>
              {companion.email ? `${companion.name} (${companion.email})` : companion.name}
            </option>
          ))}
        </select>
        <p class="actions">
          <button type="submit" class="secondary">
            Pass it on
          </button>
        </p>
      </form>
    </section>
  );
}

/** Above the form of the member a request was passed to: who asked them to answer. */
export function PassedToYou(props: { by: string }): VNode {
  return (
    <div class="notice" role="status">
      {props.by} passed this request to you to answer.
    </div>
  );
}

/** For the one who passed it: it is in the other person's hands now. */
export function PassedOn(props: { to: string; company: string }): VNode {
  return (
    <p>
      You passed this request to {props.to}, who answers it now. {props.company} learns nothing of who in your
      household answers.
    </p>
  );
}
