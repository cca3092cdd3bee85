import { changeCompany } from '../company-changes/company-changes.js';
import type { DomainKeysContext } from './domain-keys-context.js';

/** A key is re-confirmed from its domain at least hourly; the job looks for keys older than this. */
export const RECONFIRM_AFTER_MS = 55 * 60 * 1000;

/**
 * Re-confirms pinned keys from their domains, off the request path. Each due company is claimed by
 * moving its `key_checked_at`, with SKIP LOCKED so that cloud instances share the work without doubling it.
 * Outcomes: the same key confirms it; another key (or an unusable one) marks it changed, which stops
 * calls at once with `key_changed`; a failed fetch is recorded and, after 24 h, calls get `key_unavailable`.
 */
export async function reconfirmDomainKeys(ctx: DomainKeysContext, batch = 20): Promise<number> {
  const now = ctx.clock.now();
  const due = await ctx.db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('companies')
      .select(['id', 'domain', 'key_pub'])
      .where('domain', 'is not', null)
      .where('key_pub', 'is not', null)
      .where((eb) =>
        eb.or([
          eb('key_checked_at', 'is', null),
          eb('key_checked_at', '<', new Date(now.getTime() - RECONFIRM_AFTER_MS)),
        ]),
      )
      .orderBy('key_checked_at')
      .limit(batch)
      .forUpdate()
      .skipLocked()
      .execute();
    if (rows.length > 0) {
      await trx
        .updateTable('companies')
        .set({ key_checked_at: now })
        .where(
          'id',
          'in',
          rows.map((row) => row.id),
        )
        .execute();
    }
    return rows;
  });
  for (const company of due) await reconfirmOne(ctx, company.id, company.domain!, company.key_pub!);
  return due.length;
}

async function reconfirmOne(
  ctx: DomainKeysContext,
  id: number,
  domain: string,
  pinned: string,
): Promise<void> {
  const result = await ctx.fetchKeyFile(domain);
  const now = ctx.clock.now();
  // Its calls are checked against what the job records here, on this instance from the next call on.
  await changeCompany(ctx, id, async ({ db }) => {
    if (result.ok && result.key.base64 === pinned) {
      await db
        .updateTable('companies')
        .set({ key_confirmed_at: now, key_check_error: null, key_seen_other: null })
        .where('id', '=', id)
        .where('key_pub', '=', pinned)
        .execute();
      return;
    }
    if (result.ok || result.reason === 'invalid_key') {
      const seen = result.ok ? result.key.base64 : 'invalid';
      ctx.log.warn(
        { company: id, domain },
        'key file now holds another key; calls refused until the rotation is confirmed',
      );
      await db
        .updateTable('companies')
        .set({ key_seen_other: seen, key_check_error: result.ok ? null : result.message })
        .where('id', '=', id)
        .execute();
      return;
    }
    ctx.log.warn({ company: id, domain, reason: result.reason }, 'key file could not be re-confirmed');
    await db.updateTable('companies').set({ key_check_error: result.message }).where('id', '=', id).execute();
  });
}
