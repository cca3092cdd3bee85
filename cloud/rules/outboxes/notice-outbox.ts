import { sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';
import { GIVE_UP_AFTER_MS, pushRetryDelay } from './notice-retry-schedule.js';

/**
 * What the two outboxes of opening notices, push (cloud/rules/push-notifications/push-outbox.ts) and e-mail
 * (cloud/rules/mail-notifications/mail-outbox.ts), do alike with a row once a worker has it (docs/design.md
 * sections 10.6 and 10.7): mark it sent, retry it on the one schedule or give it up, give it back unsent, and purge
 * it a week after. Each keeps its own claim, since each joins what it sends to a recipient of its own kind. The
 * daily digests (cloud/rules/mail-notifications/digest-outbox.ts) and the companies' e-mails
 * (cloud/rules/company-mails/company-mail-outbox.ts) follow the same rules.
 */
export type NoticeOutbox = 'push_outbox' | 'opening_mail_outbox' | 'mail_digests' | 'company_mails';

/** A row as a worker holds it, as far as these rules need it. */
export interface HeldNotice {
  id: string;
  attempts: number;
  created_at: Date;
}

export async function markNoticeSent(
  db: Database,
  table: NoticeOutbox,
  id: string,
  now: Date,
): Promise<void> {
  await sql`update ${sql.table(table)} set sent_at = ${now}, locked_until = null, attempts = attempts + 1
             where id = ${id}`.execute(db);
}

/**
 * A failed attempt: retried after the schedule's next delay, or given up after its last attempt or once
 * GIVE_UP_AFTER_MS has passed since the row was written (a notice two hours late is noise, and the journal
 * keeps the entry). `retry: false` gives it up at once, for a failure no later attempt can mend.
 */
export async function markNoticeFailed(
  db: Database,
  table: NoticeOutbox,
  notice: HeldNotice,
  failure: { error: string; retry: boolean; now: Date; random?: (() => number) | undefined },
): Promise<{ gaveUp: boolean }> {
  const delay = failure.retry ? pushRetryDelay(notice.attempts + 1, failure.random) : null;
  const next = delay === null ? null : new Date(failure.now.getTime() + delay);
  const gaveUp = next === null || next.getTime() > notice.created_at.getTime() + GIVE_UP_AFTER_MS;
  await sql`update ${sql.table(table)}
               set attempts = attempts + 1, locked_until = null, last_error = ${failure.error.slice(0, 500)},
                   gave_up_at = ${gaveUp ? failure.now : null},
                   next_attempt_at = ${gaveUp ? sql.ref('next_attempt_at') : next}
             where id = ${notice.id}`.execute(db);
  return { gaveUp };
}

/** A worker stopped before an attempt: the rows are due again at once, for whichever worker comes next. */
export async function releaseNotices(
  db: Database,
  table: NoticeOutbox,
  ids: readonly string[],
): Promise<void> {
  if (ids.length === 0) return;
  await sql`update ${sql.table(table)} set locked_until = null
             where id in (${sql.join(ids)})`.execute(db);
}

/** How long sent and given-up rows are kept, for a look at what was sent. */
export const KEEP_NOTICES_MS = 7 * 24 * 3600_000;

/** Outbox hygiene: rows sent or given up more than KEEP_NOTICES_MS ago go. */
export async function purgeNotices(ctx: CloudContext, table: NoticeOutbox): Promise<number> {
  const old = new Date(ctx.clock.now().getTime() - KEEP_NOTICES_MS);
  const result = await sql`delete from ${sql.table(table)}
                            where sent_at < ${old} or gave_up_at < ${old}`.execute(ctx.db);
  return Number(result.numAffectedRows ?? 0);
}
