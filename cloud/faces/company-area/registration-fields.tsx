import type { VNode } from 'preact';
import { TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { MAX_EMAIL_LENGTH } from '../../rules/sign-in-codes/email-address.js';
import type { RegistrationValues } from './companies-page.js';
import { MAX_COMPANY_NAME_LENGTH } from './registration-input.js';

/**
 * A company's registration fields (docs/design.md section 11.1), as registering shows them and as the overview
 * shows them for correction until approval: the same names and limits that registration-input.ts checks.
 */
export function RegistrationFields(props: {
  values: RegistrationValues;
  errors: FieldErrors | undefined;
  hints?: { name?: string; contact_email?: string; domain?: string };
}): VNode {
  const { values, errors } = props;
  const hints = props.hints ?? {};
  return (
    <>
      <TextField
        id="name"
        name="name"
        label="Company name"
        hint={hints.name}
        value={values.name}
        errors={errors}
        autocomplete="organization"
        maxLength={MAX_COMPANY_NAME_LENGTH}
      />
      <TextField
        id="contact_email"
        name="contact_email"
        label="Contact e-mail"
        hint={hints.contact_email}
        type="email"
        value={values.contact_email}
        errors={errors}
        autocomplete="email"
        inputMode="email"
        maxLength={MAX_EMAIL_LENGTH}
      />
      <TextField
        id="domain"
        name="domain"
        label="Domain (optional)"
        hint={hints.domain}
        value={values.domain}
        errors={errors}
        autocomplete="url"
        spellcheck={false}
        maxLength={300}
      />
    </>
  );
}
