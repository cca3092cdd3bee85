import { strictPublicKeyFromBase64 } from '../../../shared/crypto/ed25519.js';
import { ApiError } from '../../../shared/errors.js';
import type { Database } from '../../foundation/db/database.js';
import type { CompanyStatus } from '../../foundation/db/schema.js';
import { changeCompany } from '../company-changes/company-changes.js';
import { queueCompanyMail } from '../company-mails/company-mail-outbox.js';
import { fetchDomainKeyToPin, pinFetchedDomainKey } from '../domain-keys/pin.js';
import { type OperatorActor, recordAction } from '../operators/actions.js';
import { approveCompany, type Company, createCompany, domainHolder, getCompany } from './companies.js';
import type { CompaniesContext } from './companies-context.js';

/**
 * What operators change of a company (docs/design.md section 11.5), from the console or the operator API: each
 * change is made in one transaction with its row in the history (cloud/rules/operators/actions.ts), from the one
 * state it applies to, so two operators acting at once cannot, say, resume a company the other just rejected.
 * Every change is a changeCompany (../company-changes/company-changes.ts), so the company cache forgets it after the commit.
 */
export const MAX_REASON_LENGTH = 500;

/** The key's fingerprint as operators compare it, or null; a value that is no valid key says so. */
export function domainKeyFingerprint(key: string | null): string | null {
  if (key === null) return null;
  try {
    return strictPublicKeyFromBase64(key).fingerprint;
  } catch {
    return 'not a valid key';
  }
}

async function lockCompany(trx: Database, id: number): Promise<Company> {
  const company = await trx
    .selectFrom('companies')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  if (!company) throw new ApiError('not_found', { message: `No company with id ${id}.` });
  return company;
}

const STATE_WORDS: Record<CompanyStatus, string> = {
  pending: 'waiting for approval',
  approved: 'approved',
  rejected: 'not approved',
  suspended: 'suspended',
};

function expectStatus(company: Company, wanted: CompanyStatus, what: string): void {
  if (company.status !== wanted) {
    throw new ApiError('conflict', {
      message: `Only a company ${STATE_WORDS[wanted]} can be ${what}; this one is ${STATE_WORDS[company.status]}.`,
    });
  }
}

/** Runs `change` on the locked company in one changeCompany that records the action too. */
function review(
  ctx: CompaniesContext,
  id: number,
  change: (
    inside: CompaniesContext,
    company: Company,
  ) => Promise<{ company: Company; record: Parameters<typeof recordAction>[2] }>,
): Promise<Company> {
  return changeCompany(ctx, id, async (inside) => {
    const { company, record } = await change(inside, await lockCompany(inside.db, id));
    await recordAction(inside.db, ctx.clock.now(), record);
    return company;
  });
}

/**
 * Approves a company waiting for approval. A domain company's key is fetched first, outside any transaction (a
 * slow domain may take 5 s, and on the embedded database a transaction holds the one connection every request
 * needs), then pinned in the transaction, provided the company has not changed meanwhile; if the company proved
 * it holds a key (`key_proven`), only that key may be pinned. `proofRequired` (the console) refuses a domain
 * company that has proved nothing; the operator API keeps approving what the domain publishes, as its operator
 * sees the key printed. A domain another admitted company holds is `domain_taken`.
 */
export async function approve(
  ctx: CompaniesContext,
  id: number,
  actor: OperatorActor,
  options: { proofRequired: boolean },
): Promise<Company> {
  const before = await getCompany(ctx, id);
  expectStatus(before, 'pending', 'approved');
  if (before.domain) requireProof(before, options.proofRequired);
  const fetchedKey = before.domain
    ? await fetchDomainKeyToPin(ctx, before.domain, before.key_proven ?? undefined)
    : undefined;
  return review(ctx, id, async (inside, company) => {
    expectStatus(company, 'pending', 'approved');
    if (company.domain !== before.domain || company.key_proven !== before.key_proven) {
      throw new ApiError('conflict', {
        message:
          'The company changed its domain or key while it was being approved; look again, then approve.',
      });
    }
    if (company.domain) {
      const holder = await domainHolder(inside, company.domain);
      if (holder && holder.id !== id) throw new ApiError('domain_taken');
    }
    const approved = await approveCompany(inside, id, { fetchedKey });
    await queueCompanyMail(inside.db, { companyId: id, kind: 'approved', now: ctx.clock.now() });
    const fingerprint = domainKeyFingerprint(approved.key_pub);
    return {
      company: approved,
      record: { actor, name: 'approve', companyId: id, reason: fingerprint },
    };
  });
}

function requireProof(company: Company, proofRequired: boolean): void {
  if (proofRequired && !company.key_proven) {
    throw new ApiError('conflict', {
      message:
        "The company has not yet proved that it holds its domain's key: it does so in its account area, then approve.",
    });
  }
}

/** Refuses a company waiting for approval; the company reads the reason in its area and may ask again. */
export function reject(
  ctx: CompaniesContext,
  id: number,
  actor: OperatorActor,
  reason: string,
): Promise<Company> {
  return review(ctx, id, async ({ db: trx }, company) => {
    expectStatus(company, 'pending', 'rejected');
    const rejected = await trx
      .updateTable('companies')
      .set({ status: 'rejected', status_reason: reason })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await queueCompanyMail(trx, { companyId: id, kind: 'rejected', detail: reason, now: ctx.clock.now() });
    return { company: rejected, record: { actor, name: 'reject', companyId: id, reason } };
  });
}

/** Stops an approved company's calls (403 `org_not_approved`) until it is resumed. */
export function suspend(
  ctx: CompaniesContext,
  id: number,
  actor: OperatorActor,
  reason: string | null,
): Promise<Company> {
  return review(ctx, id, async ({ db: trx }, company) => {
    expectStatus(company, 'approved', 'suspended');
    const suspended = await trx
      .updateTable('companies')
      .set({ status: 'suspended', suspended_at: ctx.clock.now(), status_reason: reason })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { company: suspended, record: { actor, name: 'suspend', companyId: id, reason } };
  });
}

/** Lets a suspended company call again, with the key it had pinned. */
export function resume(ctx: CompaniesContext, id: number, actor: OperatorActor): Promise<Company> {
  return review(ctx, id, async ({ db: trx }, company) => {
    expectStatus(company, 'suspended', 'resumed');
    const resumed = await trx
      .updateTable('companies')
      .set({ status: 'approved', suspended_at: null, status_reason: null })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { company: resumed, record: { actor, name: 'resume', companyId: id } };
  });
}

/** Pins the key now on the company's domain (a rotation the operator vouches for). */
export async function confirmKey(ctx: CompaniesContext, id: number, actor: OperatorActor): Promise<Company> {
  const before = await getCompany(ctx, id);
  if (!before.domain)
    throw new ApiError('conflict', { message: 'This company has no domain, hence no key.' });
  // Fetched before the transaction, as for an approval.
  const key = await fetchDomainKeyToPin(ctx, before.domain);
  return review(ctx, id, async (inside, company) => {
    if (company.domain !== before.domain) {
      throw new ApiError('conflict', { message: 'The company changed its domain meanwhile; look again.' });
    }
    const pinned = await pinFetchedDomainKey(inside, id, key);
    const fingerprint = domainKeyFingerprint(pinned.key_pub);
    return { company: pinned, record: { actor, name: 'confirm-key', companyId: id, reason: fingerprint } };
  });
}

/** A company an operator adds themselves (the operator API's `company add`), pending like any other. */
export async function addCompany(
  ctx: CompaniesContext,
  input: { name: string; domain?: string | undefined; contactEmail?: string | undefined },
  actor: OperatorActor,
): Promise<Company> {
  return ctx.db.transaction().execute(async (trx) => {
    const company = await createCompany({ ...ctx, db: trx }, input);
    await recordAction(trx, ctx.clock.now(), { actor, name: 'add', companyId: company.id });
    return company;
  });
}

/**
 * Records a secret issued to the company. The secret is issued in its own transaction (cloud/rules/call-auth/secret.ts),
 * so this row follows it: a failure between the two leaves a secret unrecorded, never a record of none.
 */
export async function recordSecret(ctx: CompaniesContext, id: number, actor: OperatorActor): Promise<void> {
  await getCompany(ctx, id);
  await recordAction(ctx.db, ctx.clock.now(), { actor, name: 'secret', companyId: id });
}
