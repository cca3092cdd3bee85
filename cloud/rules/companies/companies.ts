import type { Selectable } from 'kysely';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { CompaniesTable } from '../../foundation/db/schema.js';
import { isUniqueViolation } from '../../foundation/db/unique-violation.js';
import { changeCompany } from '../company-changes/company-changes.js';
import { pinDomainKey, pinFetchedDomainKey } from '../domain-keys/pin.js';
import type { CompaniesContext } from './companies-context.js';
import { toUnicodeDomain } from './domains.js';

export type Company = Selectable<CompaniesTable>;

/** What operators and the account area see of a company. */
export function describeCompany(company: Company) {
  return {
    id: company.id,
    name: company.name,
    domain: company.domain,
    domain_display: company.domain ? toUnicodeDomain(company.domain) : null,
    status: company.status,
    key: company.key_pub,
    key_confirmed_at: company.key_confirmed_at?.toISOString() ?? null,
    key_check_error: company.key_check_error,
    key_changed: company.key_seen_other !== null,
    created_at: company.created_at.toISOString(),
  };
}

export async function createCompany(
  ctx: CloudContext,
  input: { name: string; domain?: string | undefined; contactEmail?: string | undefined },
): Promise<Company> {
  if (input.domain !== undefined && (await domainHolder(ctx, input.domain)) !== undefined)
    throw new ApiError('conflict', { message: `A company with domain ${input.domain} exists already.` });
  return ctx.db
    .insertInto('companies')
    .values({
      name: input.name,
      domain: input.domain ?? null,
      contact_email: input.contactEmail ?? null,
      created_at: ctx.clock.now(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The company an operator let in (approved or suspended) under a domain. Pending and rejected registrations may
 * name the same domain: a registration proves nothing, so it must not keep the domain's real owner out
 * (docs/design.md section 11.1); a unique index holds one admitted company per domain.
 */
export async function domainHolder(ctx: CloudContext, domain: string): Promise<Company | undefined> {
  return ctx.db
    .selectFrom('companies')
    .selectAll()
    .where('domain', '=', domain)
    .where('status', 'in', ['approved', 'suspended'])
    .executeTakeFirst();
}

/** A company by id; a company's sandbox (docs/design.md section 11.9) is no company of its own to anybody. */
export async function getCompany(ctx: CloudContext, id: number): Promise<Company> {
  const company = await ctx.db
    .selectFrom('companies')
    .selectAll()
    .where('id', '=', id)
    .where('sandbox_of', 'is', null)
    .executeTakeFirst();
  if (!company) throw new ApiError('not_found', { message: `No company with id ${id}.` });
  return company;
}

export async function listCompanies(ctx: CloudContext): Promise<Company[]> {
  return ctx.db.selectFrom('companies').selectAll().where('sandbox_of', 'is', null).orderBy('id').execute();
}

/**
 * Approves a company. A domain company's key is pinned: `fetchedKey` when the caller fetched it already (the
 * review in ./review.ts, before its transaction, docs/design.md section 11.5), else fetched now (`pinDomainKey`).
 */
export async function approveCompany(
  ctx: CompaniesContext,
  id: number,
  options: {
    /** The domain's key, fetched already (fetchDomainKeyToPin) so that no transaction waits on the network. */
    fetchedKey?: string | undefined;
  } = {},
): Promise<Company> {
  const company = await getCompany(ctx, id);
  const approval = {
    status: 'approved' as const,
    approved_at: ctx.clock.now(),
    suspended_at: null,
    status_reason: null,
  };
  if (company.domain) {
    try {
      return options.fetchedKey !== undefined
        ? await pinFetchedDomainKey(ctx, id, options.fetchedKey, approval)
        : await pinDomainKey(ctx, company, approval);
    } catch (error) {
      // companies_domain_admitted: one admitted company per domain (docs/design.md section 11.1).
      if (isUniqueViolation(error)) throw new ApiError('domain_taken');
      throw error;
    }
  }
  return changeCompany(ctx, id, ({ db }) =>
    db.updateTable('companies').set(approval).where('id', '=', id).returningAll().executeTakeFirstOrThrow(),
  );
}
