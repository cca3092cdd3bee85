import type { CloudContext } from '../../foundation/context.js';
import type { JournalOutcome, QuestionAnswer, QuestionKind } from '../../foundation/db/schema.js';
import { type ClaimKey, releaseClaim, storeAnswer } from '../idempotency/idempotency.js';
import { outcomeIs } from '../journal/entry-outcome.js';
import { completeEntry } from '../journal/journal.js';
import { settledAnswer } from './open.js';

/**
 * Openings whose cloud instance died between sending the command and giving its verdict (cloud/README.md,
 * "When a cloud instance dies mid-open"). Their journal entry would stay without an outcome, and a retry with
 * the same Idempotency-Key would find the call in flight for a day. Whichever instance is alive settles them:
 * - an entry still without outcome past the acknowledgement deadline becomes `device_timeout`, as its own
 *   instance would have made it; an acknowledgement arriving later still turns it into `opened` (journal.ts);
 * - an `open` claim still without an answer gets the answer its entry settled on, or, when the instance died
 *   before writing any entry (nothing reached the gate), is released so that a retry runs afresh.
 */

/** How long past its deadline an entry waits for its own instance's verdict before another one gives it. */
export const SETTLE_GRACE_MS = 10_000;
/** Entries are read by time; a window reaches this far behind the previous one, for instances' clocks. */
const OVERLAP_MS = 60_000;
const BATCH = 200;
/** Said in the journal of an entry settled here rather than by the instance that sent its command. */
export const SETTLED_DETAIL = 'no verdict from the cloud instance that sent the command';

/**
 * What an entry left without a verdict settles on: its command timed out, as its own instance would have said;
 * but a request to call the gate (docs/design.md section 10.9) was asked because the controller was offline, so
 * it opened when someone tapped Call the gate, and was `device_offline` when nobody did.
 */
function settledOutcome(row: { kind: QuestionKind | null; answer: QuestionAnswer | null }): JournalOutcome {
  if (row.kind !== 'call') return 'device_timeout';
  return row.answer === 'called' ? 'opened' : 'device_offline';
}

export interface UnansweredCount {
  entries: number;
  claims: number;
}

export class UnansweredOpenings {
  readonly #ctx: CloudContext;
  readonly #ackTimeoutMs: number;
  /** Entries up to here have been looked at; null until the first run, which looks at the whole journal. */
  #scannedUntil: Date | null = null;

  constructor(ctx: CloudContext, ackTimeoutMs: number) {
    this.#ctx = ctx;
    this.#ackTimeoutMs = ackTimeoutMs;
  }

  async settle(): Promise<UnansweredCount> {
    const now = this.#ctx.clock.now();
    const until = new Date(now.getTime() - this.#ackTimeoutMs - SETTLE_GRACE_MS);
    const since = this.#scannedUntil && new Date(this.#scannedUntil.getTime() - OVERLAP_MS);
    const entries = await this.#settleEntries(since, until, now);
    const claims = await this.#settleClaims(until);
    this.#scannedUntil = until;
    if (entries + claims > 0) {
      this.#ctx.log.warn(
        { entries, claims },
        'settled openings left unanswered by a cloud instance that stopped',
      );
    }
    return { entries, claims };
  }

  async #settleEntries(since: Date | null, until: Date, now: Date): Promise<number> {
    let settled = 0;
    let after = 0;
    for (;;) {
      let query = this.#ctx.db
        .selectFrom('journal')
        .leftJoin('opening_questions as asked', 'asked.journal_id', 'journal.id')
        .select(['journal.id', 'asked.kind', 'asked.answer'])
        .where(outcomeIs('pending'))
        .where('journal.command_id', 'is not', null)
        .where('journal.at', '<', until)
        // An attempt asked about (docs/design.md section 10.8) sends its command once answered: its deadline
        // runs from the answer, or from the end of the question's time.
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('opening_questions as q')
                .select('q.journal_id')
                .whereRef('q.journal_id', '=', 'journal.id')
                .where((q) => q(q.fn.coalesce('q.answered_at', 'q.answer_by'), '>=', until)),
            ),
          ),
        )
        .where('journal.id', '>', after)
        .orderBy('journal.id')
        .limit(BATCH);
      if (since) query = query.where('journal.at', '>=', since);
      const rows = await query.execute();
      for (const row of rows) {
        const applied = await completeEntry(
          this.#ctx.db,
          { id: row.id },
          { outcome: settledOutcome(row), detail: SETTLED_DETAIL, ackedAt: null, now },
        );
        if (applied) settled += 1;
        after = row.id;
      }
      if (rows.length < BATCH) return settled;
    }
  }

  async #settleClaims(until: Date): Promise<number> {
    const { db } = this.#ctx;
    const claims = await db
      .selectFrom('idempotency')
      .leftJoin('journal', 'journal.command_id', 'idempotency.command_id')
      .select([
        'idempotency.company_id',
        'idempotency.key',
        'journal.id as entry_id',
        'journal.outcome',
        'journal.detail',
      ])
      .where('idempotency.action', '=', 'open')
      .where('idempotency.status', 'is', null)
      .where('idempotency.created_at', '<', until)
      .limit(BATCH)
      .execute();
    let settled = 0;
    for (const claim of claims) {
      const key: ClaimKey = { companyId: claim.company_id, action: 'open', key: claim.key };
      if (claim.entry_id === null) {
        if (await releaseClaim(db, key)) settled += 1;
        continue;
      }
      // An entry still in flight was written after `until`: its own instance may yet answer.
      if (claim.outcome === null) continue;
      const answer = settledAnswer({ id: claim.entry_id, outcome: claim.outcome, detail: claim.detail });
      if (await storeAnswer(db, key, answer)) settled += 1;
    }
    return settled;
  }
}
