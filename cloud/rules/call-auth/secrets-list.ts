import type { CloudContext } from '../../foundation/context.js';

/**
 * A company's secrets as its area lists them (docs/design.md section 11.2): those that still work, by their
 * hint, the current one first, each retiring one with the moment it stops. The secrets themselves are
 * stored only as hashes (secret.ts) and cannot be shown.
 */
export interface SecretListing {
  id: number;
  /** The secret's last four characters. */
  hint: string;
  createdAt: Date;
  /** When a replaced secret stops working; null for the current one. */
  retiresAt: Date | null;
}

export async function liveSecrets(ctx: CloudContext, companyId: number): Promise<SecretListing[]> {
  const rows = await ctx.db
    .selectFrom('company_secrets')
    .select(['id', 'hint', 'created_at', 'retires_at'])
    .where('company_id', '=', companyId)
    .where((eb) => eb.or([eb('retires_at', 'is', null), eb('retires_at', '>', ctx.clock.now())]))
    .orderBy('id', 'desc')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    hint: row.hint,
    createdAt: new Date(row.created_at),
    retiresAt: row.retires_at === null ? null : new Date(row.retires_at),
  }));
}

/** The id of the secret in use, 0 when there is none: what a rotation form says it replaces. */
export function currentSecretId(secrets: readonly SecretListing[]): number {
  return secrets.find((secret) => secret.retiresAt === null)?.id ?? 0;
}
