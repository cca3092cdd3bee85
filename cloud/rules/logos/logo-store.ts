import { createHash } from 'node:crypto';
import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';
import { changeCompany } from '../company-changes/company-changes.js';
import { type ActingMember, recordMemberAction } from '../member-actions/member-actions.js';

/** What changing a logo stands on beyond the ground: whatever keeps a copy of companies forgets the one changed. */
export interface LogosContext extends CloudContext {
  readonly companyCache: { forget(companyId: number): void };
}

/**
 * Logos in the database (docs/design.md section 11.3), so that every instance serves them: `company_logos` holds
 * each re-encoded image once under the SHA-256 of its bytes, and `companies.logo_hash` names the company's.
 * The name of an image is its content, so its address never serves other bytes and may be cached for good.
 */
const LOGO_HASH = /^[0-9a-f]{64}$/;

export function logoHash(image: Uint8Array): string {
  return createHash('sha256').update(image).digest('hex');
}

export function isLogoHash(text: string): boolean {
  return LOGO_HASH.test(text);
}

/** Where the service serves a logo, on its own address. */
export function logoPath(hash: string): string {
  return `/logos/${hash}.webp`;
}

/** Makes `image` (already re-encoded) the company's logo; the one it replaces goes when nobody else uses it. */
export async function setCompanyLogo(
  ctx: LogosContext,
  companyId: number,
  image: Buffer,
  by: ActingMember,
): Promise<string> {
  const hash = logoHash(image);
  await changeCompany(ctx, companyId, async ({ db: trx }) => {
    const previous = await lockCompany(trx, companyId);
    // A no-op update rather than "do nothing": it locks the row, so a replacement that is dropping the same
    // image for another company (dropUnused) waits for this transaction, sees the new reference and keeps it.
    await trx
      .insertInto('company_logos')
      .values({ hash, image, created_at: ctx.clock.now() })
      .onConflict((conflict) => conflict.column('hash').doUpdateSet({ hash }))
      .execute();
    await trx.updateTable('companies').set({ logo_hash: hash }).where('id', '=', companyId).execute();
    if (previous && previous !== hash) await dropUnused(trx, previous);
    await recordMemberAction(trx, ctx.clock.now(), { companyId, by, name: 'logo-saved' });
  });
  return hash;
}

/** The company shows its initial again; its image goes when nobody else uses it. */
export async function removeCompanyLogo(
  ctx: LogosContext,
  companyId: number,
  by: ActingMember,
): Promise<void> {
  await changeCompany(ctx, companyId, async ({ db: trx }) => {
    const previous = await lockCompany(trx, companyId);
    if (!previous) return;
    await trx.updateTable('companies').set({ logo_hash: null }).where('id', '=', companyId).execute();
    await dropUnused(trx, previous);
    await recordMemberAction(trx, ctx.clock.now(), { companyId, by, name: 'logo-removed' });
  });
}

/** The served bytes of a logo, or null. PostgreSQL's driver gives a Buffer, PGlite a Uint8Array. */
export async function readLogo(db: Database, hash: string): Promise<Buffer | null> {
  const row = await db
    .selectFrom('company_logos')
    .select('image')
    .where('hash', '=', hash)
    .executeTakeFirst();
  if (!row) return null;
  return Buffer.from(row.image.buffer, row.image.byteOffset, row.image.byteLength);
}

/** Two uploads for one company at once are taken in turn: each replaces what the other left. */
async function lockCompany(trx: Database, companyId: number): Promise<string | null> {
  const row = await trx
    .selectFrom('companies')
    .select('logo_hash')
    .where('id', '=', companyId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  return row.logo_hash;
}

/**
 * Deletes an image no company names any more. The image's row is locked first, so a company taking the same
 * image at this moment (setCompanyLogo's upsert) either commits before the count, which then sees it, or
 * waits and inserts the image again after the delete.
 */
async function dropUnused(trx: Database, hash: string): Promise<void> {
  const image = await trx
    .selectFrom('company_logos')
    .select('hash')
    .where('hash', '=', hash)
    .forUpdate()
    .executeTakeFirst();
  if (!image) return;
  const used = await trx
    .selectFrom('companies')
    .select('id')
    .where('logo_hash', '=', hash)
    .limit(1)
    .executeTakeFirst();
  if (!used) await trx.deleteFrom('company_logos').where('hash', '=', hash).execute();
}
