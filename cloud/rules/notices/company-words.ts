import { displayDomain } from '../companies/domains.js';

/** A company as a notice names it (docs/design.md section 10.6): its domain only once verified. */
export interface NamedCompany {
  company_name: string;
  company_domain: string | null;
  company_key: string | null;
}

/** "Demo Cleaning Ltd (demo-cleaning.example)", or with "(domain not confirmed)" when `unconfirmed` says so. */
export function companyWords(company: NamedCompany, unconfirmed: 'say so' | 'leave out'): string {
  const verified = company.company_domain !== null && company.company_key !== null;
  if (verified) return `${company.company_name} (${displayDomain(company.company_domain!)})`;
  return unconfirmed === 'say so' ? `${company.company_name} (domain not confirmed)` : company.company_name;
}
