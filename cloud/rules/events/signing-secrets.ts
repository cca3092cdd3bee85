import { randomBytes } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX, webhookSecretKey } from '../../../shared/crypto/webhook-signing.js';
import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';
import { seal, unseal } from '../../foundation/web/sealing.js';
import { type ActingMember, recordMemberAction } from '../member-actions/member-actions.js';
import type { EndpointRef } from './endpoints.js';

/**
 * An endpoint's signing secrets (docs/design.md sections 6 and 6.2): every delivery is signed `v1` (HMAC-SHA256,
 * Standard Webhooks) under each secret of its endpoint still valid, so a receiver verifies with the usual
 * libraries, and one endpoint's secret never signs for another. The first is made with the endpoint
 * (./endpoints.ts); a rotation keeps the replaced one signing beside the new one for
 * `SIGNING_SECRET_OVERLAP_MS`, so that a receiver can switch without losing a delivery, unless a member ends it
 * at once (a leaked one). A secret is shown once, on the answer that made it; the cloud needs it at every
 * delivery, so it is kept sealed under a server secret (foundation/web/sealing.ts), not hashed.
 */
export const SIGNING_SECRET_OVERLAP_MS = 24 * 3600 * 1000;

/** Standard Webhooks takes 24 to 64 bytes; 32 is the HMAC-SHA256 block's half and the usual choice. */
const SECRET_BYTES = 32;
const SEAL_PURPOSE = 'callback-signing-secret';

/** A signing secret as the callback page lists it: by its last four characters, the one in use first. */
export interface SigningSecretListing {
  id: number;
  hint: string;
  createdAt: Date;
  /** When a replaced secret stops signing; null for the one in use. */
  retiresAt: Date | null;
}

/** A secret made and sealed, not stored yet: sealing reads a server secret, which a transaction must not wait on. */
export interface MadeSigningSecret {
  secret: string;
  sealed: string;
  hint: string;
}

export async function makeSigningSecret(db: Database): Promise<MadeSigningSecret> {
  const secret = `${WEBHOOK_SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
  return { secret, sealed: await seal(db, SEAL_PURPOSE, secret), hint: secret.slice(-4) };
}

/**
 * Stores `made` as the endpoint's signing secret if the one in use is still `replaces` (0: none), retiring that
 * one after the overlap; says whether it did (false too when the company has no such endpoint). The endpoint's row is
 * locked, so two forms sent at once (a double click, a reload) store one secret, and the other is told it was
 * sent before. Runs inside the caller's transaction.
 */
export async function storeSigningSecret(
  trx: Database,
  endpoint: EndpointRef,
  made: MadeSigningSecret,
  options: { replaces: number; now: Date },
): Promise<boolean> {
  const { companyId, endpointId } = endpoint;
  const owned = await trx
    .selectFrom('endpoints')
    .select('id')
    .where('id', '=', endpointId)
    .where('company_id', '=', companyId)
    .forNoKeyUpdate()
    .executeTakeFirst();
  if (!owned) return false;
  const current = await trx
    .selectFrom('callback_secrets')
    .select('id')
    .where('endpoint_id', '=', endpointId)
    .where('retires_at', 'is', null)
    .executeTakeFirst();
  if ((current?.id ?? 0) !== options.replaces) return false;
  if (current) {
    const retiresAt = new Date(options.now.getTime() + SIGNING_SECRET_OVERLAP_MS);
    await trx
      .updateTable('callback_secrets')
      .set({ retires_at: retiresAt })
      .where('id', '=', current.id)
      .execute();
  }
  await trx
    .insertInto('callback_secrets')
    .values({
      company_id: companyId,
      endpoint_id: endpointId,
      sealed: made.sealed,
      hint: made.hint,
      created_at: options.now,
    })
    .execute();
  return true;
}

/**
 * A new signing secret for the company's endpoint in place of `replaces`: the secret to show once, or null when
 * the form was sent before or the company has no such endpoint.
 */
export async function rotateSigningSecret(
  ctx: Pick<CloudContext, 'db' | 'clock'>,
  endpoint: EndpointRef & { url: string },
  replaces: number,
  by?: ActingMember,
): Promise<string | null> {
  const made = await makeSigningSecret(ctx.db);
  const now = ctx.clock.now();
  const { companyId } = endpoint;
  const stored = await ctx.db.transaction().execute(async (trx) => {
    const done = await storeSigningSecret(trx, endpoint, made, { replaces, now });
    const detail = `…${made.hint} for ${endpoint.url}`;
    if (done && by)
      await recordMemberAction(trx, now, { companyId, by, name: 'signing-secret-made', detail });
    return done;
  });
  return stored ? made.secret : null;
}

/** Ends a replaced secret's overlap now; false when it is not the endpoint's, in use, or already ended. */
export async function expireRetiringSigningSecret(
  ctx: Pick<CloudContext, 'db' | 'clock'>,
  endpoint: EndpointRef & { url: string },
  secretId: number,
  by: ActingMember,
): Promise<boolean> {
  const { companyId } = endpoint;
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    const ended = await trx
      .updateTable('callback_secrets')
      .set({ retires_at: now })
      .where('id', '=', secretId)
      .where('company_id', '=', companyId)
      .where('endpoint_id', '=', endpoint.endpointId)
      .where('retires_at', '>', now)
      .returning('hint')
      .executeTakeFirst();
    if (!ended) return false;
    await recordMemberAction(trx, now, {
      companyId,
      by,
      name: 'signing-secret-expired',
      detail: `…${ended.hint} for ${endpoint.url}`,
    });
    return true;
  });
}

/** The endpoint's secrets still signing, newest first, by their hint (the area's list). */
export async function liveSigningSecrets(
  ctx: Pick<CloudContext, 'db' | 'clock'>,
  endpointId: number,
): Promise<SigningSecretListing[]> {
  const rows = await liveRows(ctx.db, endpointId, ctx.clock.now()).select(['hint', 'created_at']).execute();
  return rows.map((row) => ({
    id: row.id,
    hint: row.hint,
    createdAt: new Date(row.created_at),
    retiresAt: row.retires_at === null ? null : new Date(row.retires_at),
  }));
}

/** The keys a delivery to the endpoint made at `now` is signed with, newest first; none when it has no secret. */
export async function signingKeys(db: Database, endpointId: number, now: Date): Promise<Uint8Array[]> {
  return unsealedKeys(db, await liveRows(db, endpointId, now).select('sealed').execute());
}

/**
 * The keys a stream of `listen` signs with (docs/design.md section 6.1): the live secrets of every endpoint of
 * the company, newest first, so that a receiver checking with any one of them, the one it has at hand, verifies
 * what `listen` forwards (Standard Webhooks passes a delivery when one `v1` signature matches).
 */
export async function companySigningKeys(db: Database, companyId: number, now: Date): Promise<Uint8Array[]> {
  const rows = await db
    .selectFrom('callback_secrets')
    .select('sealed')
    .where('company_id', '=', companyId)
    .where('endpoint_id', 'is not', null)
    .where((eb) => eb.or([eb('retires_at', 'is', null), eb('retires_at', '>', now)]))
    .orderBy('id', 'desc')
    .execute();
  return unsealedKeys(db, rows);
}

async function unsealedKeys(db: Database, rows: readonly { sealed: string }[]): Promise<Uint8Array[]> {
  const keys: Uint8Array[] = [];
  for (const row of rows) {
    const secret = await unseal(db, SEAL_PURPOSE, row.sealed);
    const key = secret === null ? null : webhookSecretKey(secret);
    if (key) keys.push(key);
  }
  return keys;
}

function liveRows(db: Database, endpointId: number, now: Date) {
  return db
    .selectFrom('callback_secrets')
    .select(['id', 'retires_at'])
    .where('endpoint_id', '=', endpointId)
    .where((eb) => eb.or([eb('retires_at', 'is', null), eb('retires_at', '>', now)]))
    .orderBy('id', 'desc');
}
