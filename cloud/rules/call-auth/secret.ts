import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import type { z } from 'zod';
import { orgIdSchema, secretSchema } from '../../../shared/company-api/calls.js';
import { ApiError } from '../../../shared/errors.js';
import type { CompanyStatus } from '../../foundation/db/schema.js';
import { type Company, getCompany } from '../companies/companies.js';
import { changeCompany } from '../company-changes/company-changes.js';
import { type ActingMember, recordMemberAction } from '../member-actions/member-actions.js';
import { sandboxCompany, sandboxOpenTo } from '../sandbox/sandbox-world.js';
import type { CallAuthContext } from './call-auth-context.js';

/**
 * Company secrets (docs/design.md section 2): 32 random bytes behind a recognisable prefix, so secret scanners
 * can find a leaked one; shown once, stored as a SHA-256 hash (a 256-bit random secret needs no slow hash),
 * compared in constant time. A new secret leaves the previous ones valid for 24 hours.
 */
export const SECRET_PREFIX = 'glsk_';
/** A sandbox secret's prefix (docs/design.md section 11.9): told from a live one at a glance, by a person or a scanner. */
export const SANDBOX_SECRET_PREFIX = 'glsb_';
export const SECRET_OVERLAP_MS = 24 * 3600 * 1000;

function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

export async function issueSecret(
  ctx: CallAuthContext,
  companyId: number,
  by?: ActingMember,
): Promise<{ secret: string; previousValidUntil: Date | null }> {
  return issueOne(
    ctx,
    {
      companyId,
      holderId: companyId,
      prefix: SECRET_PREFIX,
      overlapMs: SECRET_OVERLAP_MS,
      action: 'secret-issued',
    },
    by,
  );
}

/**
 * A new sandbox secret (docs/design.md section 11.9), held by the company's sandbox, which is made if it has none:
 * calls with it and `"sandbox": true` reach the sandbox only. Only a company without a domain has one. It ends
 * the previous one at once: no servers need time to move over, and one that leaked should stop now.
 */
export async function issueSandboxSecret(
  ctx: CallAuthContext,
  companyId: number,
  by?: ActingMember,
): Promise<{ secret: string; previousValidUntil: Date | null }> {
  const sandbox = await sandboxCompany(ctx, await getCompany(ctx, companyId));
  const issue = { companyId, holderId: sandbox.id, prefix: SANDBOX_SECRET_PREFIX, overlapMs: 0 };
  return issueOne(ctx, { ...issue, action: 'sandbox-secret-issued' }, by);
}

/** A secret of `prefix` for `holderId` (the company, or its sandbox), recorded as `companyId`'s members' act. */
async function issueOne(
  ctx: CallAuthContext,
  issue: {
    companyId: number;
    holderId: number;
    prefix: string;
    /** How long the secret it replaces keeps working. */
    overlapMs: number;
    action: 'secret-issued' | 'sandbox-secret-issued';
  },
  by?: ActingMember,
): Promise<{ secret: string; previousValidUntil: Date | null }> {
  const { companyId, holderId } = issue;
  const secret = `${issue.prefix}${randomBytes(32).toString('base64url')}`;
  const now = ctx.clock.now();
  const retiresAt = new Date(now.getTime() + issue.overlapMs);
  return changeCompany(ctx, holderId, async ({ db: trx }) => {
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
      .where('company_id', '=', holderId)
      .where('retires_at', 'is', null)
      .executeTakeFirst();
    await trx
      .insertInto('company_secrets')
      .values({
        company_id: holderId,
        hash: hashSecret(secret).toString('hex'),
        hint: secret.slice(-4),
        created_at: now,
      })
      .execute();
    if (by)
      await recordMemberAction(trx, now, {
        companyId,
        by,
        name: issue.action,
        detail: `…${secret.slice(-4)}`,
      });
    const replaced = retired.numUpdatedRows > 0n && issue.overlapMs > 0;
    return { secret, previousValidUntil: replaced ? retiresAt : null };
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
  sandbox = false,
): Promise<Company> {
  const orgId = checkedCredential(orgIdSchema, 'org_id', orgIdValue);
  const secret = checkedCredential(secretSchema, 'secret', secretValue);
  // Each kind of secret goes with its own calls only, and says so: a live call never reaches the sandbox, nor
  // a sandbox call anything live (docs/design.md section 11.9).
  if (sandbox && secret.startsWith(SECRET_PREFIX)) throw new ApiError('live_secret');
  if (!sandbox && secret.startsWith(SANDBOX_SECRET_PREFIX)) throw new ApiError('sandbox_secret');
  const presented = hashSecret(secret);
  const credential = `secret:${sandbox ? 'sandbox:' : ''}${orgId}:${presented.toString('hex')}`;
  const remembered = ctx.companyCache.get(credential);
  if (remembered) return remembered;
  const now = ctx.clock.now();
  // The company and its valid secrets in one query, shared by the calls that miss together: each compares its
  // own secret with what it read. A sandbox call reads the company's sandbox, which holds the sandbox secrets.
  const found = await ctx.companyCache.shared(`secrets:${sandbox ? 'sandbox:' : ''}${orgId}`, () =>
    ctx.db
      .selectFrom('companies')
      .selectAll()
      .select([
        sql<{ hash: string; retires_at: string | null }[]>`(select coalesce(json_agg(json_build_object(
          'hash', hash, 'retires_at', retires_at)), '[]'::json) from company_secrets
          where company_id = companies.id and (retires_at is null or retires_at > ${now}))`.as('secrets'),
        sql<CompanyStatus | null>`(select owner.status from companies owner
          where owner.id = companies.sandbox_of)`.as('owner_status'),
      ])
      .where(sandbox ? 'sandbox_of' : 'id', '=', orgId)
      .executeTakeFirst(),
  );
  if (!found) {
    // A company without a sandbox yet has no sandbox secret: whatever was sent is not one of its secrets.
    if (
      sandbox &&
      (await ctx.db.selectFrom('companies').select('id').where('id', '=', orgId).executeTakeFirst())
    )
      throw new ApiError('bad_secret');
    throw new ApiError('unknown_org');
  }
  const { secrets: candidates, owner_status: ownerStatus, ...company } = found;
  if (company.domain) throw new ApiError('secret_disabled');
  let matched: (typeof candidates)[number] | undefined;
  for (const candidate of candidates) {
    // Every candidate is compared, so the time taken does not say which one matched.
    if (timingSafeEqual(presented, Buffer.from(candidate.hash, 'hex'))) matched = candidate;
  }
  if (!matched) throw new ApiError('bad_secret');
  if (company.status !== 'approved') throw new ApiError('org_not_approved');
  // The sandbox is open to a company waiting for approval (docs/design.md section 11.9), not to one refused.
  if (ownerStatus !== null && !sandboxOpenTo(ownerStatus)) throw new ApiError('org_not_approved');
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
