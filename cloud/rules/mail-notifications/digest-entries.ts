import { sql } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import { instantOf } from '../../foundation/zones/wall-clock.js';
import { keyOfHousehold, toldUnderChoice } from '../notification-choices/told-entries.js';
import type { EntryFacts } from '../push-notifications/push-payload.js';

/**
 * What a person's daily digest tells (docs/design.md section 10.7): the entries of one local day, in their
 * account zone, of every barrier where they chose one e-mail a day, by the fan-out's rules
 * (cloud/rules/notification-choices/told-entries.ts: a key of the household, "only refused attempts" honoured),
 * quiet hours or not: the digest is how a quiet night is read in the morning. At most DIGEST_LINES entries in all; each barrier also
 * says how many it had, so that a cut list says how many more its journal holds.
 */
export const DIGEST_LINES = 200;

export interface DigestBarrier {
  deviceId: string;
  barrier: string;
  /** Entries of the day told, listed or not. */
  total: number;
  /** The first of them in time, as many as fit within DIGEST_LINES. */
  entries: EntryFacts[];
}

/** The instants a local day starts and ends at in `zone` (a day of 23 or 25 hours where clocks change). */
export function localDaySpan(day: string, zone: string): { start: Date; end: Date } {
  const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  const start = instantOf({ day, time: '00:00' }, zone);
  const end = instantOf({ day: next, time: '00:00' }, zone);
  if (!start || !end) throw new Error(`not a day: ${day}`);
  return { start, end };
}

export async function digestEntries(
  db: Database,
  input: { customerId: number; day: string; zone: string; lines?: number },
): Promise<DigestBarrier[]> {
  const span = localDaySpan(input.day, input.zone);
  const told = toldOfDay(input.customerId, span);
  const counts = await sql<{ device_id: string; barrier: string; total: string }>`
    select d.id as device_id, coalesce(d.name, d.label) as barrier, count(*) as total
      ${told}
     group by d.id
     order by coalesce(d.name, d.label), d.id`.execute(db);
  const listed = await sql<EntryFacts>`
    select j.id as journal_id, d.id as device_id, coalesce(d.name, d.label) as barrier, c.name as company_name,
           c.domain as company_domain, c.key_pub as company_key, j.actor, j.outcome, j.detail, j.at
      ${told}
     order by coalesce(d.name, d.label), d.id, j.at, j.id
     limit ${input.lines ?? DIGEST_LINES}`.execute(db);
  return counts.rows.map((row) => ({
    deviceId: row.device_id,
    barrier: row.barrier,
    total: Number(row.total),
    entries: listed.rows.filter((entry) => entry.device_id === row.device_id),
  }));
}

/**
 * The entries of the span on the person's digest barriers: those where they chose one e-mail a day and still
 * stand (the owner or a member), of a key of the household, under what they chose to be told.
 */
function toldOfDay(customerId: number, span: { start: Date; end: Date }) {
  return sql`
      from notification_choices choice
      join devices d on d.id = choice.device_id
      join journal j on j.device_id = d.id
      join keys k on k.id = j.key_id
      join companies c on c.id = j.company_id
     where choice.customer_id = ${customerId} and choice.email_digest and not choice.by_email
       and (d.customer_id = ${customerId}
            or exists (select 1 from barrier_members m where m.device_id = d.id and m.customer_id = ${customerId}))
       and j.at >= ${span.start} and j.at < ${span.end}
       and ${keyOfHousehold({ key: 'k', device: 'd' })}
       and ${toldUnderChoice({ choice: 'choice', entry: 'j' })}`;
}
