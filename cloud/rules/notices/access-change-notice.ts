import { sql } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import type { AccessAct } from '../../foundation/db/schema.js';
import { clockText, dayText, momentText } from '../../foundation/web/readable-time.js';
import { lastDayOf } from '../access-keys/key-lifetime.js';
import { type AlertPayload, barrierPage, type PushReader } from './alert-payload.js';
import { companyWords, type NamedCompany } from './company-words.js';
import { framedMail, type MailReader, type NoticeMail } from './notice-mail.js';

/**
 * What a change of access says to the others of the household (docs/design.md section 10.7): "Front gate: Anna
 * granted Demo Cleaning Ltd access until 3 Dec 2026", "... changed when Demo Cleaning Ltd may open", "...
 * withdrew Demo Cleaning Ltd's access", in the words of the barrier's history (section 10.4). A key granted
 * until the end of a day says the day in the barrier's zone, as its lifetime is read; one ending at another
 * moment says it in the reader's.
 */
export interface AccessChangeFacts extends NamedCompany {
  history_id: number;
  device_id: string;
  barrier: string;
  barrier_zone: string;
  act: AccessAct;
  by: string;
  expires_at: Date | null;
  at: Date;
}

export async function accessChangeFacts(
  db: Database,
  ids: readonly number[],
): Promise<Map<number, AccessChangeFacts>> {
  const { rows } = await sql<AccessChangeFacts>`
    select h.id as history_id, h.device_id, coalesce(d.name, d.label) as barrier, d.time_zone as barrier_zone,
           h.act, coalesce(p.display_name, 'Someone') as by, k.expires_at, h.at,
           c.name as company_name, c.domain as company_domain, c.key_pub as company_key
      from access_history h
      join devices d on d.id = h.device_id
      join keys k on k.id = h.key_id
      join companies c on c.id = h.company_id
      left join customers p on p.id = h.customer_id
     where h.id in (${sql.join(ids)})`.execute(db);
  return new Map(rows.map((row) => [row.history_id, row]));
}

/** The act in a sentence: who did what for which company. */
function actWords(facts: AccessChangeFacts, readerZone: string): string {
  if (facts.act === 'withdrawn') return `${facts.by} withdrew ${facts.company_name}'s access`;
  if (facts.act === 'reshaped') return `${facts.by} changed when ${facts.company_name} may open`;
  if (!facts.expires_at) return `${facts.by} granted ${facts.company_name} access`;
  const lastDay = lastDayOf(facts.expires_at, facts.barrier_zone);
  const until = lastDay ? dayText(lastDay) : momentText(facts.expires_at, readerZone);
  return `${facts.by} granted ${facts.company_name} access until ${until}`;
}

export function accessChangePush(facts: AccessChangeFacts, reader: PushReader): AlertPayload {
  return {
    kind: 'access_change',
    tag: `access-${facts.history_id}`,
    title: `${facts.barrier}: ${actWords(facts, reader.zone)}`,
    body: `${companyWords(facts, 'leave out')}, at ${clockText(facts.at, reader.zone)}`,
    at: facts.at.toISOString(),
    url: barrierPage(reader.baseUrl, facts.device_id),
  };
}

export function accessChangeMail(facts: AccessChangeFacts, reader: MailReader): NoticeMail {
  const subject = `${facts.barrier}: ${actWords(facts, reader.zone)}`;
  return framedMail(
    facts.barrier,
    {
      subject,
      lines: [
        subject,
        '',
        `Company: ${companyWords(facts, 'say so')}`,
        `At ${momentText(facts.at, reader.zone)}`,
        '',
        `The barrier's companies and its history are on its page: ${barrierPage(reader.baseUrl, facts.device_id)}`,
      ],
      why: 'when someone else gives or withdraws access',
    },
    reader,
  );
}
