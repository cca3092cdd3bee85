import type { Database } from '../../foundation/db/database.js';
import type { QuestionKind } from '../../foundation/db/schema.js';
import { type CompanyDisplay, companyDisplay } from '../companies/display.js';
import { type BarrierRole, roleAllows, standingFor } from '../households/barrier-roles.js';

/**
 * A question as the household reads it (docs/design.md sections 10.8 and 10.9): who asks to open what, for whom,
 * until when, and what became of it. Anyone of the household reads it; only who may grant answers it.
 */
export interface QuestionView {
  journalId: number;
  deviceId: string;
  barrier: string;
  object: string | null;
  company: CompanyDisplay;
  actor: string;
  askedAt: Date;
  answerBy: Date;
  /**
   * What is asked: `allow`, Allow or Deny (section 10.8); `call`, the phone's controller is offline and whoever
   * taps "Call the gate" dials it from their own phone (section 10.9).
   */
  asks: QuestionKind;
  /**
   * The number "Call the gate" dials: only on a request to call still within its time (the company is told
   * `device_offline` after it), and only for a reader who may answer.
   */
  gateNumber: string | null;
  state:
    | { kind: 'open' }
    | { kind: 'allowed' | 'denied' | 'called'; by: string | null; at: Date }
    | { kind: 'unanswered' };
  /** Whether the reader may answer it. */
  mayAnswer: boolean;
}

function questions(db: Database) {
  return db
    .selectFrom('opening_questions as q')
    .innerJoin('journal as j', 'j.id', 'q.journal_id')
    .innerJoin('devices as d', 'd.id', 'q.device_id')
    .innerJoin('companies as c', 'c.id', 'j.company_id')
    .leftJoin('device_objects as o', 'o.id', 'j.object_id')
    .leftJoin('customers as who', 'who.id', 'q.answered_by')
    .select([
      'q.journal_id',
      'q.device_id',
      'q.asked_at',
      'q.answer_by',
      'q.kind',
      'o.gate_number',
      'q.answer',
      'q.answered_at',
      'who.display_name as answered_by_name',
      'd.name as barrier_name',
      'd.label as barrier_label',
      'o.label as object_label',
      'j.actor',
      'c.id as company_id',
      'c.name as company_name',
      'c.domain as company_domain',
      'c.key_pub as company_key',
      'c.logo_hash as company_logo',
    ]);
}

type Row = Awaited<ReturnType<ReturnType<typeof questions>['executeTakeFirstOrThrow']>>;

function viewOf(row: Row, role: BarrierRole, now: Date): QuestionView {
  return {
    journalId: row.journal_id,
    deviceId: row.device_id,
    barrier: row.barrier_name ?? row.barrier_label,
    object: row.object_label,
    company: companyDisplay({
      id: row.company_id,
      name: row.company_name,
      domain: row.company_domain,
      key_pub: row.company_key,
      logo_hash: row.company_logo,
    }),
    actor: row.actor,
    askedAt: row.asked_at,
    answerBy: row.answer_by,
    asks: row.kind,
    gateNumber:
      row.kind === 'call' && roleAllows(role, 'grant') && row.answer_by > now ? row.gate_number : null,
    state: stateOf(row, now),
    mayAnswer: roleAllows(role, 'grant'),
  };
}

function stateOf(row: Row, now: Date): QuestionView['state'] {
  if (row.answer === 'allowed' || row.answer === 'denied' || row.answer === 'called') {
    return { kind: row.answer, by: row.answered_by_name, at: row.answered_at ?? row.answer_by };
  }
  // Past its time it is unanswered, whether or not the waiting instance has written so yet.
  if (row.answer === 'unanswered' || row.answer_by <= now) return { kind: 'unanswered' };
  return { kind: 'open' };
}

/** The question on the barrier's attempt `journalId`, for someone of its household; else 404 `not_found`. */
export async function questionView(
  db: Database,
  input: { customerId: number; deviceId: string; journalId: number; now: Date },
): Promise<QuestionView | null> {
  const standing = await standingFor(db, { ...input, need: 'look' });
  const row = await questions(db)
    .where('q.journal_id', '=', input.journalId)
    .where('q.device_id', '=', input.deviceId)
    .executeTakeFirst();
  return row ? viewOf(row, standing.role, input.now) : null;
}

/** The questions on the barrier still waiting for an answer, oldest first, for its page. */
export async function openQuestions(
  db: Database,
  input: { deviceId: string; role: BarrierRole; now: Date },
): Promise<QuestionView[]> {
  const rows = await questions(db)
    .where('q.device_id', '=', input.deviceId)
    .where('q.answer', 'is', null)
    .where('q.answer_by', '>', input.now)
    .orderBy('q.journal_id')
    .limit(20)
    .execute();
  return rows.map((row) => viewOf(row, input.role, input.now));
}
