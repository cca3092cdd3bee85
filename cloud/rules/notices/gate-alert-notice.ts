import { sql } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import { clockText, momentText } from '../../foundation/web/readable-time.js';
import { type AlertPayload, barrierPage, type PushReader } from './alert-payload.js';
import { companyWords, type NamedCompany } from './company-words.js';
import { framedMail, type MailReader, type NoticeMail } from './notice-mail.js';

/**
 * What "left open" and "closed again" say (docs/design.md section 10.7): the barrier, the gate, since when it
 * stood open, and whose opening it was, the actor and the company as the journal shows them, or that it was
 * opened by other means (a remote control, a hand). Both carry the tag of their alert, so "closed again"
 * replaces "left open" on the phone.
 */
export interface GateAlertFacts {
  alert_id: number;
  device_id: string;
  barrier: string;
  gate: string;
  open_since: Date;
  left_open_at: Date;
  closed_at: Date | null;
  /** The opening that left it open, when one of the household's keys made it. */
  opening: (NamedCompany & { actor: string }) | null;
}

interface GateAlertRow extends Omit<GateAlertFacts, 'opening'> {
  actor: string | null;
  company_name: string | null;
  company_domain: string | null;
  company_key: string | null;
}

export async function gateAlertFacts(
  db: Database,
  ids: readonly number[],
): Promise<Map<number, GateAlertFacts>> {
  const { rows } = await sql<GateAlertRow>`
    select a.id as alert_id, a.device_id, coalesce(d.name, d.label) as barrier, o.label as gate,
           a.open_since, a.left_open_at, a.closed_at,
           j.actor, c.name as company_name, c.domain as company_domain, c.key_pub as company_key
      from gate_alerts a
      join devices d on d.id = a.device_id
      join device_objects o on o.id = a.object_id
      left join journal j on j.id = a.journal_id
      left join companies c on c.id = j.company_id
     where a.id in (${sql.join(ids)})`.execute(db);
  return new Map(rows.map((row) => [row.alert_id, gateAlert(row)]));
}

function gateAlert(row: GateAlertRow): GateAlertFacts {
  const { actor, company_name, company_domain, company_key, ...alert } = row;
  const opening =
    actor !== null && company_name !== null ? { actor, company_name, company_domain, company_key } : null;
  return { ...alert, opening };
}

function openedBy(facts: GateAlertFacts, unconfirmed: 'say so' | 'leave out'): string {
  if (!facts.opening) return 'opened by other means than Gatelink';
  return `opened by ${facts.opening.actor} of ${companyWords(facts.opening, unconfirmed)}`;
}

function alertPayload(
  facts: GateAlertFacts,
  content: Pick<AlertPayload, 'kind' | 'title' | 'body'>,
  at: Date,
  baseUrl: string,
): AlertPayload {
  return {
    ...content,
    tag: `gate-alert-${facts.alert_id}`,
    at: at.toISOString(),
    url: barrierPage(baseUrl, facts.device_id),
  };
}

export function leftOpenPush(facts: GateAlertFacts, reader: PushReader): AlertPayload {
  const since = clockText(facts.open_since, reader.zone);
  return alertPayload(
    facts,
    {
      kind: 'left_open',
      title: `${facts.barrier}: left open`,
      body: `${facts.gate} open since ${since}, ${openedBy(facts, 'leave out')}`,
    },
    facts.left_open_at,
    reader.baseUrl,
  );
}

export function closedAgainPush(facts: GateAlertFacts, reader: PushReader): AlertPayload {
  const closed = facts.closed_at ?? facts.left_open_at;
  return alertPayload(
    facts,
    {
      kind: 'closed_again',
      title: `${facts.barrier}: closed again`,
      body: `${facts.gate} closed at ${clockText(closed, reader.zone)}, open since ${clockText(facts.open_since, reader.zone)}`,
    },
    closed,
    reader.baseUrl,
  );
}

export function leftOpenMail(facts: GateAlertFacts, reader: MailReader): NoticeMail {
  const subject = `${facts.barrier}: left open`;
  return framedMail(
    facts.barrier,
    {
      subject,
      lines: [
        subject,
        '',
        `${facts.gate} has stood open since ${momentText(facts.open_since, reader.zone)}, longer than your limit.`,
        `It was ${openedBy(facts, 'say so')}.`,
        '',
        `Where each gate stands is on the barrier's page: ${barrierPage(reader.baseUrl, facts.device_id)}`,
      ],
      why: 'when a gate is left open',
    },
    reader,
  );
}

export function closedAgainMail(facts: GateAlertFacts, reader: MailReader): NoticeMail {
  const subject = `${facts.barrier}: closed again`;
  const closed = facts.closed_at ?? facts.left_open_at;
  return framedMail(
    facts.barrier,
    {
      subject,
      lines: [
        subject,
        '',
        `${facts.gate} closed at ${momentText(closed, reader.zone)}.`,
        `It had stood open since ${momentText(facts.open_since, reader.zone)}, ${openedBy(facts, 'say so')}.`,
        '',
        `Where each gate stands is on the barrier's page: ${barrierPage(reader.baseUrl, facts.device_id)}`,
      ],
      why: 'when a gate is left open',
    },
    reader,
  );
}
