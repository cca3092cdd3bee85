import { sql } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import type { QuestionKind } from '../../foundation/db/schema.js';
import { clockText, momentText } from '../../foundation/web/readable-time.js';
import type { AlertPayload, PushReader } from './alert-payload.js';
import { companyWords, type NamedCompany } from './company-words.js';
import { framedMail, type MailReader, type NoticeMail } from './notice-mail.js';

/**
 * What a question of "ask me before each opening" says (docs/design.md section 10.8): which company asks to open
 * which gate of which barrier, for whom, and until when the answer counts; a tap opens the question's page,
 * where Allow and Deny are, and the service worker puts the same two buttons on the notification. The tag is the
 * attempt's, so a question sent twice shows once. Questions are pushed only; the e-mail is for completeness of
 * the table of kinds and says that the answer is on the page.
 */
export interface QuestionFacts extends NamedCompany {
  journal_id: number;
  device_id: string;
  barrier: string;
  gate: string | null;
  actor: string;
  asked_at: Date;
  answer_by: Date;
  /** `allow`: Allow or Deny (section 10.8); `call`: the phone is offline, call the gate by hand (section 10.9). */
  asks: QuestionKind;
}

export async function questionFacts(
  db: Database,
  ids: readonly number[],
): Promise<Map<number, QuestionFacts>> {
  const { rows } = await sql<QuestionFacts>`
    select q.journal_id, q.device_id, coalesce(d.name, d.label) as barrier, o.label as gate, j.actor,
           q.asked_at, q.answer_by, q.kind as asks, c.name as company_name, c.domain as company_domain, c.key_pub as company_key
      from opening_questions q
      join journal j on j.id = q.journal_id
      join devices d on d.id = q.device_id
      join companies c on c.id = j.company_id
      left join device_objects o on o.id = j.object_id
     where q.journal_id in (${sql.join(ids)})`.execute(db);
  return new Map(rows.map((row) => [row.journal_id, row]));
}

function questionPage(baseUrl: string, facts: QuestionFacts): string {
  return `${baseUrl}/barriers/${encodeURIComponent(facts.device_id)}/questions/${facts.journal_id}`;
}

export function questionPush(facts: QuestionFacts, reader: PushReader): AlertPayload {
  const what = facts.gate ? ` ${facts.gate}` : '';
  const by = clockText(facts.answer_by, reader.zone);
  return {
    kind: 'question',
    // The same tag for both kinds: a request to call replaces the Allow and Deny it follows.
    tag: `question-${facts.journal_id}`,
    ...(facts.asks === 'call' ? { asks: 'call' as const } : {}),
    title: `${facts.barrier}: ${facts.company_name} asks to open`,
    body:
      facts.asks === 'call'
        ? `For ${facts.actor}, to open${what}. Your phone that calls the gate is offline: tap, then Call the gate by ${by}, or it stays shut.`
        : `For ${facts.actor}, to open${what}. Allow by ${by}, or the gate stays shut.`,
    at: facts.asked_at.toISOString(),
    url: questionPage(reader.baseUrl, facts),
  };
}

export function questionMail(facts: QuestionFacts, reader: MailReader): NoticeMail {
  const subject = `${facts.barrier}: ${facts.company_name} asks to open`;
  return framedMail(
    facts.barrier,
    {
      subject,
      lines: [
        subject,
        '',
        `${companyWords(facts, 'say so')} asks to open ${facts.gate ?? facts.barrier} for ${facts.actor}.`,
        ...(facts.asks === 'call'
          ? ['Your phone that calls the gate is offline: call the gate yourself from the page below.']
          : []),
        `Answer by ${momentText(facts.answer_by, reader.zone)} on ${questionPage(reader.baseUrl, facts)}`,
      ],
      why: 'when a company asks to open',
    },
    reader,
  );
}
