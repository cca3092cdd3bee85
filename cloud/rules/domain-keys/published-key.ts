import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import { KeyError, strictPublicKeyFromBase64 } from '../../../shared/crypto/ed25519.js';
import { keyProofText, verifyKeyProof } from '../../../shared/crypto/key-proof.js';
import { ApiError } from '../../../shared/errors.js';
import type { CompaniesTable } from '../../foundation/db/schema.js';
import { changeCompany } from '../company-changes/company-changes.js';
import { type ActingMember, recordMemberAction } from '../member-actions/member-actions.js';
import type { DomainKeysContext } from './domain-keys-context.js';
import { fetchDomainKeyToPin, pinFetchedDomainKey } from './pin.js';

/** A company's row, as cloud/rules/companies/ reads it; taken from the schema so that this folder imports none above it. */
type Company = Selectable<CompaniesTable>;

/**
 * The key a domain publishes as its company checks it from its area, and the proof that the company holds its
 * private half (docs/design.md section 11.2). Checking never pins: calls stay verified against the pinned key
 * only (pin.ts). The console approves a domain company only with a proven key, and pins exactly that key.
 */
export type KeyCheckResult = { ok: true; fingerprint: string } | { ok: false; message: string };

/**
 * Fetches the key file now and records its key as `key_published`. A proof of another key no longer counts.
 * When the domain again publishes the pinned key, that is a re-confirmation as the hourly job would make it
 * (confirm.ts), so a company that put its key back need not wait for the job.
 */
export async function checkPublishedKey(
  ctx: DomainKeysContext,
  company: Company,
  by?: ActingMember,
): Promise<KeyCheckResult> {
  const domain = domainOf(company);
  const fetched = await ctx.fetchKeyFile(domain);
  if (!fetched.ok) return { ok: false, message: fetched.message };
  const key = fetched.key.base64;
  const now = ctx.clock.now();
  await changeCompany(ctx, company.id, async ({ db: trx }) => {
    await trx
      .updateTable('companies')
      .set({
        key_published: key,
        key_published_at: now,
        key_proven: sql<string | null>`case when key_proven = ${key} then key_proven else null end`,
      })
      .where('id', '=', company.id)
      .execute();
    await trx
      .updateTable('companies')
      .set({ key_confirmed_at: now, key_checked_at: now, key_check_error: null, key_seen_other: null })
      .where('id', '=', company.id)
      .where('key_pub', '=', key)
      .execute();
    const detail = fetched.key.fingerprint;
    if (by) await recordMemberAction(trx, now, { companyId: company.id, by, name: 'key-checked', detail });
  });
  return { ok: true, fingerprint: fetched.key.fingerprint };
}

/** The text the company signs to prove it holds `key` (shared/crypto/key-proof.ts). */
export function keyProofChallenge(ctx: DomainKeysContext, company: Company, key: string): string {
  return keyProofText({
    serviceHost: new URL(ctx.baseUrl()).host,
    companyId: company.id,
    domain: domainOf(company),
    fingerprint: strictPublicKeyFromBase64(key).fingerprint,
  });
}

/** The fingerprint of a stored key, or null for one that is not a usable key (`key_seen_other` 'invalid'). */
export function fingerprintOf(key: string): string | null {
  try {
    return strictPublicKeyFromBase64(key).fingerprint;
  } catch (error) {
    if (error instanceof KeyError) return null;
    throw error;
  }
}

/**
 * Verifies a proof of `key_published`, strictly, and records the key as proven. The update names the key
 * verified, so a key file checked again meanwhile (another key) is not marked proven by a proof of the old one.
 */
export async function proveHeldKey(
  ctx: DomainKeysContext,
  company: Company,
  signature: string,
  by?: ActingMember,
): Promise<void> {
  const key = checkProof(ctx, company, signature);
  const proven = await changeCompany(ctx, company.id, async ({ db }) => {
    const done = await db
      .updateTable('companies')
      .set({ key_proven: key })
      .where('id', '=', company.id)
      .where('key_published', '=', key)
      .executeTakeFirst();
    if (done.numUpdatedRows > 0n && by) {
      const detail = fingerprintOf(key);
      await recordMemberAction(db, ctx.clock.now(), {
        companyId: company.id,
        by,
        name: 'key-proven',
        detail,
      });
    }
    return done;
  });
  if (proven.numUpdatedRows === 0n) {
    throw new ApiError('key_proof_failed', {
      message: 'Your key file was checked again meanwhile; sign the text now shown.',
    });
  }
}

/**
 * Pins the key the domain now publishes in place of the pinned one, once the company proved it holds it
 * (docs/design.md section 11.2: a member's session alone does not confirm a key nobody has shown to hold).
 * The key file is fetched again and must still hold the key proven.
 */
export async function confirmProvenRotation(
  ctx: DomainKeysContext,
  company: Company,
  signature: string,
  by?: ActingMember,
): Promise<Company> {
  if (!company.key_pub || !company.key_published || company.key_published === company.key_pub) {
    throw new ApiError('conflict', {
      message: 'Your domain publishes the key already pinned: there is no new key to confirm.',
    });
  }
  const key = checkProof(ctx, company, signature);
  // Fetched before the transaction, as every pin is (pin.ts): the key file must still hold the key proven.
  const fetched = await fetchDomainKeyToPin(ctx, domainOf(company), key);
  return changeCompany(ctx, company.id, async (inside) => {
    const pinned = await pinFetchedDomainKey(inside, company.id, fetched, { key_proven: key });
    const detail = fingerprintOf(key);
    if (by)
      await recordMemberAction(inside.db, ctx.clock.now(), {
        companyId: company.id,
        by,
        name: 'key-rotation-confirmed',
        detail,
      });
    return pinned;
  });
}

function checkProof(ctx: DomainKeysContext, company: Company, signature: string): string {
  const key = company.key_published;
  if (!key) {
    throw new ApiError('key_proof_failed', {
      message: 'Check your key file first, then sign the text shown.',
    });
  }
  if (!verifyKeyProof(key, keyProofChallenge(ctx, company, key), signature)) {
    throw new ApiError('key_proof_failed');
  }
  return key;
}

function domainOf(company: Company): string {
  if (!company.domain) {
    throw new ApiError('conflict', { message: 'This company has no domain, hence no key: it uses secrets.' });
  }
  return company.domain;
}
