import { ApiError } from '../../../shared/errors.js';
import { type CompanyChangeContext, changeCompany } from '../company-changes/company-changes.js';
import { type ActingMember, recordMemberAction } from '../member-actions/member-actions.js';
import type { Company } from './companies.js';

/**
 * What a company may change of its registration (docs/design.md section 11.1): its name, contact address and
 * domain, only while no operator has let it in (pending, or rejected and asking again). Once approved, the name
 * customers see and the domain calls are signed for are what the operator approved; a change goes through them.
 * A new domain forgets the key checked and proved for the old one.
 */
export interface RegistrationDetails {
  name: string;
  contactEmail: string;
  domain: string | null;
}

export function mayEditRegistration(company: Company): boolean {
  return company.status === 'pending' || company.status === 'rejected';
}

export async function updateRegistration(
  ctx: CompanyChangeContext,
  company: Company,
  details: RegistrationDetails,
  by: ActingMember,
): Promise<Company> {
  const domainChanged = details.domain !== company.domain;
  const updated = await changeCompany(ctx, company.id, async ({ db }) => {
    const row = await db
      .updateTable('companies')
      .set({
        name: details.name,
        contact_email: details.contactEmail,
        domain: details.domain,
        ...(domainChanged ? { key_published: null, key_published_at: null, key_proven: null } : {}),
      })
      .where('id', '=', company.id)
      .where('status', 'in', ['pending', 'rejected'])
      .returningAll()
      .executeTakeFirst();
    const detail = changedDetails(company, details);
    if (row && detail)
      await recordMemberAction(db, ctx.clock.now(), { companyId: company.id, by, name: 'details', detail });
    return row;
  });
  if (!updated) throw approvedAlready();
  return updated;
}

/** What a save of the details changed, as the record says it ("the name to Acme Ltd"); null for nothing. */
function changedDetails(company: Company, details: RegistrationDetails): string | null {
  const changes = [
    details.name !== company.name ? `the name to ${details.name}` : null,
    details.contactEmail !== company.contact_email ? `the contact address to ${details.contactEmail}` : null,
    details.domain !== company.domain
      ? details.domain
        ? `the domain to ${details.domain}`
        : 'to no domain'
      : null,
  ].filter((change) => change !== null);
  return changes.length > 0 ? changes.join(' and ') : null;
}

/** A rejected company, having fixed what the reason said, asks the operators again. */
export async function askAgain(
  ctx: CompanyChangeContext,
  company: Company,
  by: ActingMember,
): Promise<Company> {
  const updated = await changeCompany(ctx, company.id, async ({ db }) => {
    const row = await db
      .updateTable('companies')
      .set({ status: 'pending' })
      .where('id', '=', company.id)
      .where('status', '=', 'rejected')
      .returningAll()
      .executeTakeFirst();
    if (row)
      await recordMemberAction(db, ctx.clock.now(), { companyId: company.id, by, name: 'asked-again' });
    return row;
  });
  if (!updated)
    throw new ApiError('conflict', { message: 'Only a company that was not approved can ask again.' });
  return updated;
}

function approvedAlready(): ApiError {
  return new ApiError('conflict', {
    message:
      "An operator has approved this company: write to Gatelink's operators to change its name or domain.",
  });
}
