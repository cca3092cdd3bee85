import { z } from 'zod';
import { isPrintableText } from '../../../shared/printable-text.js';
import { formText, textField } from '../../foundation/web/form-input.js';
import { asciiDomainProblem, normalizeDomain } from '../../rules/companies/domains.js';
import { emailAddress } from '../../rules/sign-in-codes/email-address.js';

/**
 * What registering a company accepts (docs/design.md section 11.1), with the sentence shown beside a field
 * that is wrong. A domain may be typed in Unicode or punycode, with or without `https://` and a path pasted
 * from the address bar; it is stored as punycode, the form the company's signed calls name.
 */
export const MAX_COMPANY_NAME_LENGTH = 100;

export const companyName = formText(
  z
    .string()
    .trim()
    .min(1, "Enter the company's name")
    .max(MAX_COMPANY_NAME_LENGTH, `Enter a name of at most ${MAX_COMPANY_NAME_LENGTH} characters`)
    .refine(isPrintableText, 'Use letters, digits and punctuation only, without invisible characters'),
);

const typedDomain = z
  .string()
  .trim()
  .max(300, 'Enter a domain of at most 253 characters')
  .transform((text, issue) => {
    if (text === '') return null;
    const bare = text.replace(/^https?:\/\//i, '').replace(/[/?#].*$/, '');
    const domain = normalizeDomain(bare);
    if (domain) return domain;
    issue.addIssue({
      code: 'custom',
      message: `Check the domain: ${asciiDomainProblem(bare.toLowerCase()) ?? 'it is not a domain name'}`,
    });
    return z.NEVER;
  });

export const registrationForm = z.object({
  name: companyName,
  contact_email: formText(
    z.string().trim().min(1, 'Enter an address where Gatelink can reach the company').pipe(emailAddress),
  ),
  domain: formText(typedDomain),
});

export type Registration = z.infer<typeof registrationForm>;

/** The fields as typed, to show the form again with what the person wrote. */
export function typedRegistration(body: unknown): { name: string; contact_email: string; domain: string } {
  return {
    name: textField(body, 'name'),
    contact_email: textField(body, 'contact_email'),
    domain: textField(body, 'domain'),
  };
}
