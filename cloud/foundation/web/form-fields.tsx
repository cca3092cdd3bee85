import type { VNode } from 'preact';
import { describedBy, FieldError } from './field-errors.js';
import type { FieldErrors } from './form-input.js';

/**
 * A labelled text field of the account pages (docs/design.md section 10.2): its hint, its problem between the
 * label and the input (field-errors.tsx), both tied to the input by `aria-describedby`. The field's id is the
 * key of its problem in `errors`, which the error summary links to.
 */
export interface TextFieldProps {
  id: string;
  name: string;
  label: string;
  hint?: string;
  errors?: FieldErrors | undefined;
  value?: string | undefined;
  type?: 'text' | 'email';
  autocomplete?: string;
  inputMode?: 'numeric' | 'email' | 'text';
  maxLength?: number;
  spellcheck?: boolean;
  autocapitalize?: 'characters';
}

export function TextField(props: TextFieldProps): VNode {
  const attributes = {
    id: props.id,
    name: props.name,
    value: props.value ?? '',
    autocomplete: props.autocomplete,
    inputMode: props.inputMode,
    maxLength: props.maxLength,
    spellcheck: props.spellcheck,
    autocapitalize: props.autocapitalize,
    'aria-describedby': describedBy(props.id, props.errors, !!props.hint),
    'aria-invalid': props.errors?.[props.id] ? ('true' as const) : undefined,
  };
  return (
    <>
      <label for={props.id}>{props.label}</label>
      {props.hint ? (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      <FieldError errors={props.errors} field={props.id} />
      {props.type === 'email' ? (
        <input type="email" {...attributes} />
      ) : (
        <input type="text" {...attributes} />
      )}
    </>
  );
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
