import { sql } from 'kysely';
import { ApiError } from '../../../shared/errors.js';
import type { Database } from '../../foundation/db/database.js';
import type { QuestionAnswer, QuestionKind } from '../../foundation/db/schema.js';
import { standingFor } from '../households/barrier-roles.js';

/**
 * "Ask me before each opening" (docs/design.md section 10.8): the question an `open` on such a key asks the
 * barrier's household, written with the attempt's journal entry (cloud/rules/opening/open-attempt.sql), and its
 * one answer. Whoever may grant on the barrier answers (its owner, a member who may grant); the first answer
 * written counts, since each write takes only a question with no answer yet and still inside its time.
 */

/** The channel an answer is announced on, so that the instance holding the `open` learns it at once. */
export const ANSWER_CHANNEL = 'gatelink_answers';

/** What someone may answer: Allow or Deny to "ask me first", a tap on "Call the gate" to a request to call. */
export type GivenAnswer = 'allowed' | 'denied' | 'called';

export type Settled = { answer: GivenAnswer; by: string | null } | { answer: 'unanswered'; by: null };

/** The question kind each answer belongs to (migration 0032 holds the table to the same). */
const KIND_OF_ANSWER: Readonly<Record<GivenAnswer, QuestionKind>> = {
  allowed: 'allow',
  denied: 'allow',
  called: 'call',
};

export type AnswerResult =
  | { kind: 'answered'; answer: GivenAnswer }
  /** Someone else (or the clock) answered first: what they answered, and who. */
  | { kind: 'settled'; settled: Settled };

/**
 * The reader's answer to the question on the barrier's attempt `journalId`. Anyone who may not grant on the
 * barrier, or a question of another barrier, is answered 404 like a barrier that does not exist; the check and
 * the write commit together, so a member removed meanwhile answers nothing.
 */
export async function answerQuestion(
  db: Database,
  input: { customerId: number; deviceId: string; journalId: number; answer: GivenAnswer; now: Date },
): Promise<AnswerResult> {
  return db.transaction().execute(async (trx) => {
    await standingFor(trx, { customerId: input.customerId, deviceId: input.deviceId, need: 'grant' });
    const written = await trx
      .updateTable('opening_questions')
      .set({ answer: input.answer, answered_by: input.customerId, answered_at: input.now })
      .where('journal_id', '=', input.journalId)
      .where('device_id', '=', input.deviceId)
      .where('kind', '=', KIND_OF_ANSWER[input.answer])
      .where('answer', 'is', null)
      .where('answer_by', '>', input.now)
      .returning('journal_id')
      .executeTakeFirst();
    if (written) {
      await sql`select pg_notify(${ANSWER_CHANNEL}, ${String(input.journalId)})`.execute(trx);
      return { kind: 'answered', answer: input.answer };
    }
    const settled = await settledAnswer(trx, input.journalId, input.deviceId);
    if (!settled) throw new ApiError('not_found', { message: 'No such question on this barrier.' });
    if (settled.answer !== 'pending') return { kind: 'settled', settled };
    if (settled.kind !== KIND_OF_ANSWER[input.answer]) {
      throw new ApiError('invalid_field', {
        field: 'answer',
        message: settled.kind === 'call' ? 'Answer with Call the gate.' : 'Answer with Allow or Deny.',
      });
    }
    // Its time is up and the waiting instance has not written so yet: it is unanswered all the same.
    return { kind: 'settled', settled: { answer: 'unanswered', by: null } };
  });
}

/** The question's answer and who gave it; `pending` while nobody has; null when there is no such question. */
export async function settledAnswer(
  db: Database,
  journalId: number,
  deviceId?: string,
): Promise<Settled | { answer: 'pending'; kind: QuestionKind } | null> {
  let query = db
    .selectFrom('opening_questions as q')
    .leftJoin('customers as c', 'c.id', 'q.answered_by')
    .select(['q.answer', 'q.kind', 'c.display_name'])
    .where('q.journal_id', '=', journalId);
  if (deviceId !== undefined) query = query.where('q.device_id', '=', deviceId);
  const row = await query.executeTakeFirst();
  if (!row) return null;
  const answer = answerOf(row.answer, row.display_name ?? null);
  return answer.answer === 'pending' ? { answer: 'pending', kind: row.kind } : answer;
}

function answerOf(answer: QuestionAnswer | null, by: string | null): Settled | { answer: 'pending' } {
  if (answer === null) return { answer: 'pending' };
  if (answer === 'unanswered') return { answer, by: null };
  return { answer, by };
}

/**
 * The questions among `journalIds` that have an answer now, each with who gave it: one read for every `open`
 * waiting on this instance.
 */
export async function answersAmong(
  db: Database,
  journalIds: readonly number[],
): Promise<Map<number, Settled>> {
  const settled = new Map<number, Settled>();
  if (journalIds.length === 0) return settled;
  const rows = await db
    .selectFrom('opening_questions as q')
    .leftJoin('customers as c', 'c.id', 'q.answered_by')
    .select(['q.journal_id', 'q.answer', 'c.display_name'])
    .where('q.journal_id', 'in', journalIds)
    .where('q.answer', 'is not', null)
    .execute();
  for (const row of rows) {
    const answer = answerOf(row.answer, row.display_name ?? null);
    if (answer.answer !== 'pending') settled.set(row.journal_id, answer);
  }
  return settled;
}

/**
 * The question's time ran out: written `unanswered`, unless an answer beat it to the row, which then counts. The
 * instance holding the `open` calls it when the deadline passes.
 */
export async function closeUnanswered(db: Database, journalId: number, now: Date): Promise<Settled> {
  const closed = await db
    .updateTable('opening_questions')
    .set({ answer: 'unanswered', answered_at: now })
    .where('journal_id', '=', journalId)
    .where('answer', 'is', null)
    .returning('journal_id')
    .executeTakeFirst();
  if (closed) return { answer: 'unanswered', by: null };
  const settled = await settledAnswer(db, journalId);
  if (!settled || settled.answer === 'pending') return { answer: 'unanswered', by: null };
  return settled;
}
