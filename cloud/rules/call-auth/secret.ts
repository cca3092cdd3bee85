import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import type { z } from 'zod';
import { orgIdSchema, secretSchema } from '../../../shared/company-api/calls.js';
import { ApiError } from '../../../shared/errors.js';
import type { Company } from '../companies/companies.js';
import { changeCompany } from '../company-changes/company-changes.js';
import { type ActingMember, recordMemberAction } from '../member-actions/member-actions.js';
import type { CallAuthContext } from './call-auth-context.js';

/**
 * Company secrets (docs/design.md section 2): 32 random bytes behind a recognisable prefix, so secret scanners
 * can find a leaked one; shown once, stored as a SHA-256 hash (a 256-bit random secret needs no slow hash),
 * compared in constant time. A new secret leaves the previous ones valid for 24 hours.
 */
export const SECRET_PREFIX = 'glsk_';
export const SECRET_OVERLAP_MS = 24 * 3600 * 1000;

function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

export async function issueSecret(
  ctx: CallAuthContext,
  companyId: number,
  by?: ActingMember,
): Promise<{ secret: string; previousValidUntil: Date | null }> {
  const secret = `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
  const now = ctx.clock.now();
  const retiresAt = new Date(now.getTime() + SECRET_OVERLAP_MS);
  return changeCompany(ctx, companyId, async ({ db: trx }) => {
    const company = await trx
      .selectFrom('companies')
      .select(['id', 'domain'])
      .where('id', '=', companyId)
      .forUpdate()
      .executeTakeFirst();
    if (!company) throw new ApiError('not_found', { message: `No company with id ${companyId}.` });
    if (company.domain) {
      throw new ApiError('secret_disabled', {
        message: 'This company has a domain; it signs calls with its key.',
      });
    }
    const retired = await trx
      .updateTable('company_secrets')
      .set({ retires_at: retiresAt })
      .where('company_id', '=', companyId)
      .where('retires_at', 'is', null)
      .executeTakeFirst();
    await trx
      .insertInto('company_secrets')
      .values({
        company_id: companyId,
        hash: hashSecret(secret).toString('hex'),
        hint: secret.slice(-4),
        created_at: now,
      })
      .execute();
    if (by)
      await recordMemberAction(trx, now, {
        companyId,
        by,
        name: 'secret-issued',
        detail: `…${secret.slice(-4)}`,
      });
    return { secret, previousValidUntil: retired.numUpdatedRows > 0n ? retiresAt : null };
  });
}

/**
 * Ends a replaced secret's overlap now, for one that leaked: calls with it are refused from this moment on this
 * instance, and within the company cache's 10 s on the others (docs/design.md section 2.2). Only a retiring
 * secret: the one in use is ended by rotating, so that the company is never left without one. Says whether it
 * ended one (false: not the company's, in use, or already ended).
 */
export async function expireRetiringSecret(
  ctx: CallAuthContext,
  companyId: number,
  secretId: number,
  by?: ActingMember,
): Promise<boolean> {
  const now = ctx.clock.now();
  return changeCompany(ctx, companyId, async ({ db: trx }) => {
    const ended = await trx
      .updateTable('company_secrets')
      .set({ retires_at: now })
      .where('id', '=', secretId)
      .where('company_id', '=', companyId)
      .where('retires_at', '>', now)
      .returning('hint')
      .executeTakeFirst();
    if (ended && by)
      await recordMemberAction(trx, now, { companyId, by, name: 'secret-expired', detail: `…${ended.hint}` });
    return ended !== undefined;
  });
}

/** Checks org_id and secret from the body and returns the company. */
export async function authenticateSecret(
  ctx: CallAuthContext,
  orgIdValue: unknown,
  secretValue: unknown,
): Promise<Company> {
  const orgId = checkedCredential(orgIdSchema, 'org_id', orgIdValue);
  const secret = checkedCredential(secretSchema, 'secret', secretValue);
  const presented = hashSecret(secret);
  const credential = `secret:${orgId}:${presented.toString('hex')}`;
  const remembered = ctx.companyCache.get(credential);
  if (remembered) return remembered;
  const now = ctx.clock.now();
  // The company and its valid secrets in one query, shared by the calls that miss together: each compares its
  // own secret with what it read.
  const found = await ctx.companyCache.shared(`secrets:${orgId}`, () =>
    ctx.db
      .selectFrom('companies')
      .selectAll()
      .select(
        sql<{ hash: string; retires_at: string | null }[]>`(select coalesce(json_agg(json_build_object(
          'hash', hash, 'retires_at', retires_at)), '[]'::json) from company_secrets
          where company_id = companies.id and (retires_at is null or retires_at > ${now}))`.as('secrets'),
      )
      .where('id', '=', orgId)
      .executeTakeFirst(),
  );
  if (!found) throw new ApiError('unknown_org');
  const { secrets: candidates, ...company } = found;
  if (company.domain) throw new ApiError('secret_disabled');
  let matched: (typeof candidates)[number] | undefined;
  for (const candidate of candidates) {
    // Every candidate is compared, so the time taken does not say which one matched.
    if (timingSafeEqual(presented, Buffer.from(candidate.hash, 'hex'))) matched = candidate;
  }
  if (!matched) throw new ApiError('bad_secret');
  if (company.status !== 'approved') throw new ApiError('org_not_approved');
  // Not remembered past the secret's retirement, which is exact to the second.
  ctx.companyCache.remember(credential, company, matched.retires_at ? new Date(matched.retires_at) : null);
  return company;
}

/** One credential checked by the company API's own schema (shared/company-api/calls.ts), named when refused. */
function checkedCredential<T extends z.ZodType>(schema: T, field: string, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ApiError('invalid_field', { field, message: result.error.issues[0]!.message });
}
