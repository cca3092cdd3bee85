import { sql, type Transaction } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import type { DB, JournalOutcome, NotificationTell } from '../../foundation/db/schema.js';
import { standingFor, standingOf } from '../households/barrier-roles.js';
import type { QuietHours } from './quiet-hours.js';

/**
 * What each person is told of a barrier's openings (docs/design.md section 10.7): every opening (the default),
 * only refused attempts, or nothing, and whether by e-mail too. The owner and each member choose for themselves,
 * a member who may only look included: being told is looking. The fan-out reads the choices in its one query
 * (cloud/rules/push-notifications/recipients.ts); this is where they are read for the page and written.
 */
export const TELL_CHOICES = ['every', 'refused', 'none'] as const satisfies readonly NotificationTell[];

/**
 * The refusals "Only refused attempts" tells: the outcomes the journal words "Refused: ..."
 * (cloud/rules/journal/outcome-words.ts). Each is decided by the cloud and written with the entry, so the
 * fan-out knows it when it reads the entry; a controller offline or at fault is not a refusal of the company.
 */
export const REFUSED_OUTCOMES = [
  'revoked',
  'expired',
  'rate_limit',
  'forbidden',
  'not_started',
  'outside_hours',
  'openings_used',
] as const satisfies readonly JournalOutcome[];

/**
 * E-mail of what they are told: none, an e-mail for each entry, or one a day (the digest). Stored as two columns
 * (`by_email`, `email_digest`, migration 0020), `by_email` winning, so that what the previous release saves
 * reads as it meant it.
 */
export const EMAIL_CHOICES = ['none', 'each', 'daily'] as const;
export type EmailChoice = (typeof EMAIL_CHOICES)[number];

export interface NotificationChoice {
  tell: NotificationTell;
  email: EmailChoice;
  /** Quiet hours in the person's account zone; null when none (./quiet-hours.ts). */
  quiet: QuietHours | null;
  /** Told of a gate left open past the limit, and of it closed again (section 10.7). */
  leftOpen: boolean;
  /** Told of access granted, changed or withdrawn by someone else of the household. */
  accessChanges: boolean;
}

/** What someone who never chose is told: what everyone was told before there was a choice. */
export const DEFAULT_CHOICE: NotificationChoice = {
  tell: 'every',
  email: 'none',
  quiet: null,
  leftOpen: true,
  accessChanges: true,
};

/** The e-mail choice the two columns hold; `by_email` first, as the previous release wrote it alone. */
export function emailChoiceOfColumns(row: {
  by_email: boolean | null;
  email_digest: boolean | null;
}): EmailChoice {
  if (row.by_email) return 'each';
  return row.email_digest ? 'daily' : 'none';
}

/** The columns that hold an e-mail choice. */
function emailColumns(email: EmailChoice): { by_email: boolean; email_digest: boolean } {
  return { by_email: email === 'each', email_digest: email === 'daily' };
}

/** The reader's choice on the barrier, and their confirmed address, which the e-mails would go to. */
export async function choiceOf(
  db: Database,
  input: { customerId: number; deviceId: string },
): Promise<NotificationChoice & { address: string | null }> {
  const row = await db
    .selectFrom('customers')
    .leftJoin('notification_choices as choice', (join) =>
      join.onRef('choice.customer_id', '=', 'customers.id').on('choice.device_id', '=', input.deviceId),
    )
    .select([
      'customers.email',
      'customers.email_verified_at',
      'choice.tell',
      'choice.by_email',
      'choice.email_digest',
      'choice.quiet_from',
      'choice.quiet_until',
      'choice.left_open',
      'choice.access_changes',
    ])
    .where('customers.id', '=', input.customerId)
    .executeTakeFirstOrThrow();
  const quiet = row.quiet_from && row.quiet_until ? { from: row.quiet_from, until: row.quiet_until } : null;
  return {
    tell: row.tell ?? DEFAULT_CHOICE.tell,
    email: emailChoiceOfColumns(row),
    quiet,
    leftOpen: row.left_open ?? DEFAULT_CHOICE.leftOpen,
    accessChanges: row.access_changes ?? DEFAULT_CHOICE.accessChanges,
    address: row.email_verified_at ? row.email : null,
  };
}

/**
 * Keeps the reader's choice on the barrier. Anyone who may look at it chooses for themselves; anyone else is
 * answered 404 like a barrier that does not exist, and nothing is written. The check and the write commit
 * together, so a member removed meanwhile leaves no choice behind.
 */
export async function setChoice(
  db: Database,
  input: { customerId: number; deviceId: string; choice: NotificationChoice; now: Date },
): Promise<void> {
  const chosen = {
    tell: input.choice.tell,
    ...emailColumns(input.choice.email),
    quiet_from: input.choice.quiet?.from ?? null,
    quiet_until: input.choice.quiet?.until ?? null,
    left_open: input.choice.leftOpen,
    access_changes: input.choice.accessChanges,
    updated_at: input.now,
  };
  await db.transaction().execute(async (trx) => {
    await standingFor(trx, { customerId: input.customerId, deviceId: input.deviceId, need: 'look' });
    await trx
      .insertInto('notification_choices')
      .values({ device_id: input.deviceId, customer_id: input.customerId, ...chosen })
      .onConflict((oc) => oc.columns(['device_id', 'customer_id']).doUpdateSet(chosen))
      .execute();
    if (input.choice.email !== 'each') await dropWaitingMails(trx, input);
  });
}

/**
 * E-mails of the barrier not sent yet to someone who no longer wants them go too: "no more e-mail" holds from
 * the moment it is said, not from the next opening. The outbox's few rows are joined to their entries, never the
 * barrier's journal read.
 */
async function dropWaitingMails(
  trx: Transaction<DB>,
  input: { customerId: number; deviceId: string },
): Promise<void> {
  await sql`
    delete from opening_mail_outbox o
     where o.customer_id = ${input.customerId} and o.sent_at is null and o.gave_up_at is null
       and (o.journal_id in (select id from journal where device_id = ${input.deviceId})
            or o.gate_alert_id in (select id from gate_alerts where device_id = ${input.deviceId})
            or o.history_id in (select id from access_history where device_id = ${input.deviceId}))`.execute(
    trx,
  );
}

/**
 * What the unsubscribe page shows before anything is pressed: the barrier and whether this person is still
 * e-mailed of it; null when they no longer stand on it. Reads only: a GET of the link changes nothing.
 */
export async function emailChoiceOf(
  db: Database,
  input: { customerId: number; deviceId: string },
): Promise<{ barrier: string; byEmail: boolean } | null> {
  const standing = await standingOf(db, input);
  if (!standing) return null;
  const row = await db
    .selectFrom('devices')
    .leftJoin('notification_choices as choice', (join) =>
      join.onRef('choice.device_id', '=', 'devices.id').on('choice.customer_id', '=', input.customerId),
    )
    .select(['devices.name', 'devices.label', 'choice.by_email', 'choice.email_digest'])
    .where('devices.id', '=', input.deviceId)
    .executeTakeFirstOrThrow();
  return { barrier: row.name ?? row.label, byEmail: emailChoiceOfColumns(row) !== 'none' };
}

/**
 * One-click unsubscribe (RFC 8058): no more e-mail of the barrier for this person, each or in the daily digest,
 * what they are told by push kept. Someone no longer in the barrier's household gets no e-mail of it anyway, and nothing is written for
 * them. Returns the barrier's name when the person stands on it.
 */
export async function stopEmail(
  db: Database,
  input: { customerId: number; deviceId: string; now: Date },
): Promise<{ barrier: string } | null> {
  return db.transaction().execute(async (trx) => {
    const standing = await standingOf(trx, input);
    if (!standing) return null;
    await trx
      .insertInto('notification_choices')
      .values({
        device_id: input.deviceId,
        customer_id: input.customerId,
        tell: DEFAULT_CHOICE.tell,
        ...emailColumns('none'),
        updated_at: input.now,
      })
      .onConflict((oc) =>
        oc
          .columns(['device_id', 'customer_id'])
          .doUpdateSet({ ...emailColumns('none'), updated_at: input.now }),
      )
      .execute();
    await dropWaitingMails(trx, input);
    const device = await trx
      .selectFrom('devices')
      .select(['name', 'label'])
      .where('id', '=', input.deviceId)
      .executeTakeFirstOrThrow();
    return { barrier: device.name ?? device.label };
  });
}

/**
 * The daily digest's own one-click unsubscribe: no more digest of any of the person's barriers, the other
 * choices kept (an e-mail of each entry is not a digest, and stays). Returns how many barriers it stopped.
 */
export async function stopDigest(db: Database, input: { customerId: number; now: Date }): Promise<number> {
  const result = await db
    .updateTable('notification_choices')
    .set({ email_digest: false, updated_at: input.now })
    .where('customer_id', '=', input.customerId)
    .where('email_digest', '=', true)
    .where('by_email', '=', false)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Whether the person gets a daily digest of any barrier now. Reads only, for the unsubscribe page's GET. */
export async function hasDigest(db: Database, customerId: number): Promise<boolean> {
  const row = await db
    .selectFrom('notification_choices')
    .select('device_id')
    .where('customer_id', '=', customerId)
    .where('email_digest', '=', true)
    .where('by_email', '=', false)
    .executeTakeFirst();
  return row !== undefined;
}
