import type { Database } from '../../foundation/db/database.js';
import { openingMail } from '../mail-notifications/opening-mail.js';
import { type PushPayload, pushPayload } from '../push-notifications/push-payload.js';
import type { NoticeSubject, SentNoticeKind } from '../push-notifications/sent-notice-kinds.js';
import { accessChangeFacts, accessChangeMail, accessChangePush } from './access-change-notice.js';
import type { AlertPayload, PushReader } from './alert-payload.js';
import {
  closedAgainMail,
  closedAgainPush,
  gateAlertFacts,
  leftOpenMail,
  leftOpenPush,
} from './gate-alert-notice.js';
import type { MailReader, NoticeMail } from './notice-mail.js';
import { openingFacts } from './opening-notice.js';
import { questionFacts, questionMail, questionPush } from './question-notice.js';

/**
 * The table of kinds of notice (docs/design.md section 10.7): for each kind an outbox row may have, which column
 * names its subject, how a batch of subjects is read (one query per kind and batch), and what its notification
 * and its e-mail say. The delivery workers (cloud/links/web-push/push-delivery.ts,
 * cloud/links/mail/opening-mail-delivery.ts) read a claimed batch through `readNotices` and choose by the row's
 * kind; nothing else knows the kinds apart. A new kind is a name in ../push-notifications/sent-notice-kinds.ts
 * and its entry here.
 */
export type NoticePayload = PushPayload | AlertPayload;

interface KindRules<F extends { device_id: string }> {
  subject: 'journal_id' | 'gate_alert_id' | 'history_id';
  facts(db: Database, ids: readonly number[]): Promise<Map<number, F>>;
  push(facts: F, reader: PushReader): NoticePayload;
  mail(facts: F, reader: MailReader): NoticeMail;
}

/** A notice, read: the barrier it is of (its e-mail's unsubscribe names it), and its words for each channel. */
export interface Notice {
  deviceId: string;
  push(reader: PushReader): NoticePayload;
  mail(reader: MailReader): NoticeMail;
}

interface KindEntry {
  subject: KindRules<{ device_id: string }>['subject'];
  read(db: Database, ids: readonly number[]): Promise<Map<number, Notice>>;
}

/** An entry of the table, its facts' type kept inside it. */
function kind<F extends { device_id: string }>(rules: KindRules<F>): KindEntry {
  return {
    subject: rules.subject,
    async read(db, ids) {
      const facts = await rules.facts(db, ids);
      const notices = new Map<number, Notice>();
      for (const [id, fact] of facts) {
        notices.set(id, {
          deviceId: fact.device_id,
          push: (reader) => rules.push(fact, reader),
          mail: (reader) => rules.mail(fact, reader),
        });
      }
      return notices;
    },
  };
}

export const NOTICE_KINDS: Record<SentNoticeKind, KindEntry> = {
  opening: kind({
    subject: 'journal_id',
    facts: openingFacts,
    push: (facts, reader) => pushPayload(facts, reader.baseUrl),
    mail: openingMail,
  }),
  left_open: kind({
    subject: 'gate_alert_id',
    facts: gateAlertFacts,
    push: leftOpenPush,
    mail: leftOpenMail,
  }),
  closed_again: kind({
    subject: 'gate_alert_id',
    facts: gateAlertFacts,
    push: closedAgainPush,
    mail: closedAgainMail,
  }),
  access_change: kind({
    subject: 'history_id',
    facts: accessChangeFacts,
    push: accessChangePush,
    mail: accessChangeMail,
  }),
  question: kind({
    subject: 'journal_id',
    facts: questionFacts,
    push: questionPush,
    mail: questionMail,
  }),
};

/**
 * What each claimed row tells, by row id, read kind by kind. A row whose subject is gone meanwhile (its rows go
 * with it, on delete cascade) is missing from the map.
 */
export async function readNotices(
  db: Database,
  rows: readonly NoticeSubject[],
): Promise<Map<string, Notice>> {
  const notices = new Map<string, Notice>();
  const kinds = new Set(rows.map((row) => row.kind));
  for (const name of kinds) {
    const entry = NOTICE_KINDS[name];
    const ofKind = rows.filter((row) => row.kind === name);
    const ids = [...new Set(ofKind.map((row) => row[entry.subject]).filter((id) => id !== null))];
    if (ids.length === 0) continue;
    const read = await entry.read(db, ids);
    for (const row of ofKind) {
      const subject = row[entry.subject];
      const notice = subject === null ? undefined : read.get(subject);
      if (notice) notices.set(row.id, notice);
    }
  }
  return notices;
}
