import { ApiError } from '../../shared/errors.js';
import { type Company, getCompany } from '../companies/companies.js';
import type { CloudContext } from '../context.js';

/**
 * Confirms that the key now published on the company's domain is its new key: fetched again now, strictly
 * checked, and pinned. Until then calls answer `key_changed`, so a domain that changed hands gets nothing.
 */
export async function confirmKeyRotation(ctx: CloudContext, companyId: number): Promise<Company> {
  const company = await getCompany(ctx, companyId);
  if (!company.domain)
    throw new ApiError('conflict', { message: 'This company has no domain, hence no key.' });
  const fetched = await ctx.fetchKeyFile(company.domain);
  if (!fetched.ok)
    throw new ApiError('key_fetch_failed', { message: fetched.message, detail: fetched.reason });
  const now = ctx.clock.now();
  return ctx.db
    .updateTable('companies')
    .set({
      key_pub: fetched.key.base64,
      key_confirmed_at: now,
      key_checked_at: now,
      key_check_error: null,
      key_seen_other: null,
    })
    .where('id', '=', companyId)
    .returningAll()
    .executeTakeFirstOrThrow();
}
