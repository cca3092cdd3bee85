import type { NoticeKind } from '../../foundation/db/schema.js';

/**
 * The kinds of notice this release sends (docs/design.md section 10.7): the outboxes' claims take rows of these
 * only, so a row of a kind a newer release added waits for an instance of that release rather than being sent
 * wrong or given up here during a rolling upgrade. What each says is the table of kinds
 * (cloud/rules/notices/notice-kinds.ts), which the compiler holds to this list: a kind added here needs its
 * entry there.
 */
export const SENT_NOTICE_KINDS = [
  'opening',
  'left_open',
  'closed_again',
  'access_change',
  'question',
] as const satisfies readonly NoticeKind[];

export type SentNoticeKind = (typeof SENT_NOTICE_KINDS)[number];

/** A claimed row's kind and subject: what the table of kinds reads to say what the notice tells. */
export interface NoticeSubject {
  id: string;
  kind: SentNoticeKind;
  journal_id: number | null;
  gate_alert_id: number | null;
  history_id: number | null;
}
