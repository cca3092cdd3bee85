import type { VNode } from 'preact';
import type { FieldErrors } from './form-input.js';

/**
 * A form's problems where a person looks for them: a summary at the top that links to each field, and the
 * sentence again beside the field (GOV.UK's error summary pattern; docs/design.md section 10.2).
 */
export function ErrorSummary(props: { errors: FieldErrors | undefined }): VNode | null {
  const entries = Object.entries(props.errors ?? {});
  if (entries.length === 0) return null;
  return (
    <div class="notice error" role="alert" aria-labelledby="error-summary-title">
      <h2 id="error-summary-title" class="summary-title">
        There is a problem
      </h2>
      <ul class="error-list">
        {entries.map(([field, message]) => (
          <li key={field}>
            <a href={`#${field}`}>{message}</a>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The problem of one field, beside it; its id is what the field's aria-describedby names. */
export function FieldError(props: { errors: FieldErrors | undefined; field: string }): VNode | null {
  const message = props.errors?.[props.field];
  if (!message) return null;
  return (
    <p class="field-error" id={`${props.field}-error`}>
      {message}
    </p>
  );
}

/** aria-describedby for a field: its hint, and its problem when it has one. */
export function describedBy(field: string, errors: FieldErrors | undefined, hint = true): string | undefined {
  const ids = [hint ? `${field}-hint` : null, errors?.[field] ? `${field}-error` : null].filter(Boolean);
  return ids.length > 0 ? ids.join(' ') : undefined;
}
