import type { VNode } from 'preact';

/**
 * Form parts of the account pages, after the GOV.UK Design System (docs/design.md section 10.2): a summary of
 * the problems at the top, each linking to its field, and each field with its own message between its label
 * and the input, tied to the input by `aria-describedby` so that a screen reader reads it with the field.
 */
export type FieldErrors = Readonly<Record<string, string>>;

export function ErrorSummary(props: {
  errors: FieldErrors | undefined;
  ids: Readonly<Record<string, string>>;
}) {
  const entries = Object.entries(props.errors ?? {});
  if (entries.length === 0) return null;
  return (
    <div class="notice error" role="alert">
      <h2 class="summary-title">There is a problem</h2>
      <ul class="summary-list">
        {entries.map(([field, message]) => (
          <li key={field}>
            <a class="summary-link" href={`#${props.ids[field] ?? field}`}>
              {message}
            </a>
          </li>
        ))}
      </ul>
    </div>
  );
}

export interface TextFieldProps {
  id: string;
  name: string;
  label: string;
  hint?: string;
  error?: string | undefined;
  value?: string | undefined;
  type?: 'text' | 'email';
  autocomplete?: string;
  inputMode?: 'numeric' | 'email' | 'text';
  maxLength?: number;
  required?: boolean;
  spellcheck?: boolean;
}

export function TextField(props: TextFieldProps): VNode {
  const hintId = props.hint ? `${props.id}-hint` : undefined;
  const errorId = props.error ? `${props.id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div class={props.error ? 'field invalid' : 'field'}>
      <label for={props.id}>{props.label}</label>
      {props.hint ? (
        <p class="hint" id={hintId}>
          {props.hint}
        </p>
      ) : null}
      {props.error ? (
        <p class="field-error" id={errorId}>
          <span class="visually-hidden">Error: </span>
          {props.error}
        </p>
      ) : null}
      {props.type === 'email' ? (
        <input type="email" {...inputAttributes(props, describedBy)} />
      ) : (
        <input type="text" {...inputAttributes(props, describedBy)} />
      )}
    </div>
  );
}

function inputAttributes(props: TextFieldProps, describedBy: string | undefined) {
  return {
    id: props.id,
    name: props.name,
    value: props.value ?? '',
    autocomplete: props.autocomplete,
    inputMode: props.inputMode,
    maxLength: props.maxLength,
    required: props.required,
    spellcheck: props.spellcheck,
    'aria-describedby': describedBy,
    'aria-invalid': props.error ? ('true' as const) : undefined,
  };
}

/** Hidden fields that carry a value from page to page (`next`, the address a code was sent to). */
export function Carried(props: { fields: Readonly<Record<string, string | undefined>> }) {
  return (
    <>
      {Object.entries(props.fields).map(([name, value]) =>
        value === undefined ? null : <input key={name} type="hidden" name={name} value={value} />,
      )}
    </>
  );
}
