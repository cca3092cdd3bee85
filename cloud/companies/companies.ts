import type { Selectable } from 'kysely';
import { ApiError } from '../../shared/errors.js';
import type { CloudContext } from '../context.js';
import type { CompaniesTable } from '../db/schema.js';
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
  const inserted = await ctx.db
    .insertInto('companies')
    .values({
      name: input.name,
      domain: input.domain ?? null,
      contact_email: input.contactEmail ?? null,
      created_at: ctx.clock.now(),
    })
    .onConflict((oc) => oc.column('domain').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (!inserted)
    throw new ApiError('conflict', { message: `A company with domain ${input.domain} exists already.` });
  return inserted;
}

export async function getCompany(ctx: CloudContext, id: number): Promise<Company> {
  const company = await ctx.db.selectFrom('companies').selectAll().where('id', '=', id).executeTakeFirst();
  if (!company) throw new ApiError('not_found', { message: `No company with id ${id}.` });
  return company;
}

export async function listCompanies(ctx: CloudContext): Promise<Company[]> {
  return ctx.db.selectFrom('companies').selectAll().orderBy('id').execute();
}

/**
 * Approves a company. A domain company's key file is fetched now and its key pinned: calls are verified
 * against this key until the company confirms a rotation, so a domain that changes hands inherits nothing.
 */
export async function approveCompany(ctx: CloudContext, id: number): Promise<Company> {
  const company = await getCompany(ctx, id);
  const now = ctx.clock.now();
  if (!company.domain) {
    return ctx.db
      .updateTable('companies')
      .set({ status: 'approved', approved_at: now, suspended_at: null })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }
  const fetched = await ctx.fetchKeyFile(company.domain);
  if (!fetched.ok)
    throw new ApiError('key_fetch_failed', { message: fetched.message, detail: fetched.reason });
  return ctx.db
    .updateTable('companies')
    .set({
      status: 'approved',
      approved_at: now,
      suspended_at: null,
      key_pub: fetched.key.base64,
      key_confirmed_at: now,
      key_checked_at: now,
      key_check_error: null,
      key_seen_other: null,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function suspendCompany(ctx: CloudContext, id: number): Promise<Company> {
  await getCompany(ctx, id);
  return ctx.db
    .updateTable('companies')
    .set({ status: 'suspended', suspended_at: ctx.clock.now() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
