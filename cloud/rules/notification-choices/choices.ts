import { sql, type Transaction } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import type { DB, JournalOutcome, NotificationTell } from '../../foundation/db/schema.js';
import { standingFor, standingOf } from '../households/barrier-roles.js';

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

export interface NotificationChoice {
  tell: NotificationTell;
  byEmail: boolean;
}

/** What someone who never chose is told: what everyone was told before there was a choice. */
export const DEFAULT_CHOICE: NotificationChoice = { tell: 'every', byEmail: false };

/** The reader's choice on the barrier, and their confirmed address, which the e-mails would go to. */
export async function choiceOf(
  db: Database,
  input: { customerId: number; deviceId: string },
): Promise<NotificationChoice & { email: string | null }> {
  const row = await db
    .selectFrom('customers')
    .leftJoin('notification_choices as choice', (join) =>
      join.onRef('choice.customer_id', '=', 'customers.id').on('choice.device_id', '=', input.deviceId),
    )
    .select(['customers.email', 'customers.email_verified_at', 'choice.tell', 'choice.by_email'])
    .where('customers.id', '=', input.customerId)
    .executeTakeFirstOrThrow();
  return {
    tell: row.tell ?? DEFAULT_CHOICE.tell,
    byEmail: row.by_email ?? DEFAULT_CHOICE.byEmail,
    email: row.email_verified_at ? row.email : null,
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
  await db.transaction().execute(async (trx) => {
    await standingFor(trx, { customerId: input.customerId, deviceId: input.deviceId, need: 'look' });
    await trx
      .insertInto('notification_choices')
      .values({
        device_id: input.deviceId,
        customer_id: input.customerId,
        tell: input.choice.tell,
        by_email: input.choice.byEmail,
        updated_at: input.now,
      })
      .onConflict((oc) =>
        oc.columns(['device_id', 'customer_id']).doUpdateSet({
          tell: input.choice.tell,
          by_email: input.choice.byEmail,
          updated_at: input.now,
        }),
      )
      .execute();
    if (!input.choice.byEmail) await dropWaitingMails(trx, input);
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
     using journal j
     where j.id = o.journal_id and o.customer_id = ${input.customerId} and j.device_id = ${input.deviceId}
       and o.sent_at is null and o.gave_up_at is null`.execute(trx);
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
    .select(['devices.name', 'devices.label', 'choice.by_email'])
    .where('devices.id', '=', input.deviceId)
    .executeTakeFirstOrThrow();
  return { barrier: row.name ?? row.label, byEmail: row.by_email ?? DEFAULT_CHOICE.byEmail };
}

/**
 * One-click unsubscribe (RFC 8058): no more e-mail of the barrier for this person, what they are told by push
 * kept. Someone no longer in the barrier's household gets no e-mail of it anyway, and nothing is written for
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
        by_email: false,
        updated_at: input.now,
      })
      .onConflict((oc) =>
        oc.columns(['device_id', 'customer_id']).doUpdateSet({ by_email: false, updated_at: input.now }),
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
