import type { Selectable, Updateable } from 'kysely';
import { ApiError } from '../../../shared/errors.js';
import type { CompaniesTable } from '../../foundation/db/schema.js';
import { changeCompany } from '../company-changes/company-changes.js';
import type { DomainKeysContext } from './domain-keys-context.js';

/** A company's row, as cloud/rules/companies/ reads it; taken from the schema so that this folder imports none above it. */
type Company = Selectable<CompaniesTable>;

/**
 * Fetches the key now published on the company's domain, strictly checked, and pins it, together with
 * `also` (an approval, say). Calls are verified against the pinned key only, so a domain that changes hands
 * inherits nothing; a later, different key is refused until it is pinned through here again.
 */
export async function pinDomainKey(
  ctx: DomainKeysContext,
  company: Company,
  also: Updateable<CompaniesTable> = {},
  /** The key the caller has seen and vouches for (the console's approval, section 11.5): any other is refused. */
  expectedKey?: string,
): Promise<Company> {
  if (!company.domain)
    throw new ApiError('conflict', { message: 'This company has no domain, hence no key.' });
  return pinFetchedDomainKey(
    ctx,
    company.id,
    await fetchDomainKeyToPin(ctx, company.domain, expectedKey),
    also,
  );
}

/**
 * The key the domain publishes now, ready to pin; refused with `key_fetch_failed` when it cannot be had, or
 * differs from `expectedKey`. A fetch may take seconds (section 2): callers make it before any transaction.
 */
export async function fetchDomainKeyToPin(
  ctx: DomainKeysContext,
  domain: string,
  expectedKey?: string,
): Promise<string> {
  const fetched = await ctx.fetchKeyFile(domain);
  if (!fetched.ok)
    throw new ApiError('key_fetch_failed', { message: fetched.message, detail: fetched.reason });
  if (expectedKey !== undefined && fetched.key.base64 !== expectedKey)
    throw new ApiError('key_fetch_failed', {
      message:
        'The domain now publishes another key than the one checked; check the key again, then approve.',
      detail: 'key_differs',
    });
  return fetched.key.base64;
}

/** Pins a key just fetched from the company's domain (fetchDomainKeyToPin), with `also`. */
export async function pinFetchedDomainKey(
  ctx: DomainKeysContext,
  companyId: number,
  key: string,
  also: Updateable<CompaniesTable> = {},
): Promise<Company> {
  const now = ctx.clock.now();
  return changeCompany(ctx, companyId, ({ db }) =>
    db
      .updateTable('companies')
      .set({
        ...also,
        key_pub: key,
        key_confirmed_at: now,
        key_checked_at: now,
        key_check_error: null,
        key_seen_other: null,
      })
      .where('id', '=', companyId)
      .returningAll()
      .executeTakeFirstOrThrow(),
  );
}
