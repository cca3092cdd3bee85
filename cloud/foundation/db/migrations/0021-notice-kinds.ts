import { type Kysely, sql } from 'kysely';

/**
 * Notices beyond openings (docs/design.md section 10.7): a gate left open and closed again, and access granted,
 * changed or withdrawn by someone else of the household; `question` is reserved for "ask me before each
 * opening", which refers to a journal entry as `opening` does.
 *
 * `gate_alerts`: one row per time the sweep marks a gate left open (its object and mark, unique), with the
 * opening that left it open when one of the household's keys did, and `closed_at` once it closed. Both outboxes
 * gain `kind` (default `opening`, so the previous release's inserts, which do not name it, still hold) and one
 * subject column per kind of subject: `journal_id` (made nullable) for `opening` and `question`, `gate_alert_id`
 * for `left_open` and `closed_again`, `history_id` (the barrier's key history) for `access_change`; a check
 * holds each row to exactly its kind's one. The unique keys become per kind. The old ones, (subscription_id,
 * journal_id) and (customer_id, journal_id), stay: the previous release names them in its `on conflict`, and
 * PostgreSQL infers no partial or wider index for that target (section 8.2). They are why a gate's notices do
 * not refer to the journal entry itself: it would be the opening row's key. This release names none of the keys
 * in its inserts, so a later one may drop the old keys once no running release names them.
 *
 * `notification_choices` gains the two boxes, on by default, so no row, and a row the previous release writes,
 * still read as the defaults.
 */
const KINDS = sql`('opening', 'question', 'left_open', 'closed_again', 'access_change')`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table gate_alerts (
      id integer generated always as identity primary key,
      device_id text not null references devices(id) on delete cascade,
      object_id integer not null references device_objects(id) on delete cascade,
      journal_id integer references journal(id) on delete set null,
      open_since timestamptz not null,
      left_open_at timestamptz not null,
      closed_at timestamptz,
      unique (object_id, left_open_at)
    )
  `.execute(db);
  await sql`create index gate_alerts_open on gate_alerts(object_id) where closed_at is null`.execute(db);
  await sql`
    alter table notification_choices
      add column left_open boolean not null default true,
      add column access_changes boolean not null default true
  `.execute(db);
  await kindsOf(db, 'push_outbox', 'subscription_id');
  await kindsOf(db, 'opening_mail_outbox', 'customer_id');
}

/** The kind, the subjects, their check and the per-kind keys of one outbox, whose recipient is `to`. */
async function kindsOf(db: Kysely<unknown>, table: string, to: string): Promise<void> {
  const outbox = sql.table(table);
  const recipient = sql.ref(to);
  await sql`
    alter table ${outbox}
      add column kind text not null default 'opening' check (kind in ${KINDS}),
      add column gate_alert_id integer references gate_alerts(id) on delete cascade,
      add column history_id integer references access_history(id) on delete cascade,
      alter column journal_id drop not null,
      add constraint ${sql.ref(`${table}_subject`)} check (
        num_nonnulls(journal_id, gate_alert_id, history_id) = 1
        and (journal_id is not null) = (kind in ('opening', 'question'))
        and (gate_alert_id is not null) = (kind in ('left_open', 'closed_again'))
        and (history_id is not null) = (kind = 'access_change')),
      add constraint ${sql.ref(`${table}_kind_journal`)} unique (${recipient}, kind, journal_id),
      add constraint ${sql.ref(`${table}_kind_gate_alert`)} unique (${recipient}, kind, gate_alert_id),
      add constraint ${sql.ref(`${table}_history`)} unique (${recipient}, history_id)
  `.execute(db);
  await sql`
    create index ${sql.ref(`${table}_gate_alert`)} on ${outbox}(gate_alert_id) where gate_alert_id is not null
  `.execute(db);
  await sql`
    create index ${sql.ref(`${table}_history_row`)} on ${outbox}(history_id) where history_id is not null
  `.execute(db);
}
