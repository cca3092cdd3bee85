import { sql } from 'kysely';
import type { PositionReport } from '../../../shared/protocol/positions.js';
import type { CloudContext } from '../../foundation/context.js';
import { type ResultColumns, readRow, type TableResult } from '../../foundation/db/function-result.js';
import { StatementBatches } from '../../foundation/db/statement-batches.js';

/**
 * Controllers' signed position reports applied to their objects, and attached to the openings they complete
 * (docs/design.md sections 5.2 and 7.5). The reports of a moment go through apply_position_reports
 * (./apply-position-reports.sql) together, which holds the rule: what is newer, what it changes, which step it
 * attaches and which events it records. Their signatures and devices were checked before they came here.
 */

/** What became of a report: counted in `gatelink_position_reports_total{result}` (docs/design.md section 8.1). */
export type PositionResult = 'applied' | 'repeat' | 'stale' | 'future' | 'unknown_object' | 'bad_signature';

const RESULTS: ReadonlySet<string> = new Set<PositionResult>([
  'applied',
  'repeat',
  'stale',
  'unknown_object',
]);

/**
 * What apply_position_reports returns (`returns table (...)` in apply-position-reports.sql: each report's place,
 * from 1, and one of RESULTS), declared here once; a test compares it with the database's catalog.
 */
export const applyPositionReportsResult = {
  function: 'apply_position_reports',
  table: { report_n: 'integer', report_result: 'text' },
} as const satisfies TableResult<ResultColumns>;

/**
 * How far ahead of the cloud's clock a report's `changed_at` may be. A report from further ahead is dropped: as
 * the newest, it would make every later true report of the object stale until that time came.
 */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;

/**
 * How long a report waits for others to share its statement. Nobody waits on a report (the controller has its
 * PUBACK already), and a gate's position reaching the customer's page 0.1 s later is unseen; what it buys is that
 * reports cost one statement and one commit per tenth of a second, not one each, beside the openings that share
 * the database (docs/design.md section 7.5).
 */
export const REPORT_LINGER_MS = 100;

/**
 * How long reports may wait, past their linger, for a moment with no opening under way (docs/design.md section
 * 7.5): an opening is waited on, a report is not, so on a busy instance reports give way and go in their
 * statements at the next pause, or after this at the latest, late but never lost.
 */
export const REPORT_HOLD_MAX_MS = 1000;

/**
 * Reports in one statement. A statement holds the database (PGlite's one thread, or the rows it locks) until it
 * commits, and a held second's reports go together: in statements of this many (about 10 ms on PGlite), an
 * opening arriving meanwhile waits for one of them, not for the whole second's (docs/design.md section 7.5).
 */
export const REPORTS_PER_STATEMENT = 32;

/** Reports held for a pause at most: a backlog this large goes at once, so that holding never grows without end. */
export const REPORTS_HELD_MAX = 1024;

/** A report handed on, with the check of its signature, made when its statement is about to run. */
interface Handed {
  report: PositionReport;
  signed(): Promise<boolean>;
}

/**
 * Reports checked and written many at a time: those arriving within REPORT_LINGER_MS of each other have their
 * signatures checked together (on libuv's thread pool) and share one statement, in the order received, each
 * applied exactly as alone. The checks wait with them: an Ed25519 verification costs about a twentieth of an
 * opening, and made together a moment later, off the event loop, they leave the openings of that moment alone.
 * A statement the database refuses is applied again report by report, so that one bad report never loses the
 * others.
 */
export class PositionReports {
  readonly #ctx: CloudContext;
  readonly #batches: StatementBatches<Handed, PositionResult>;
  /** Reports handed on and not applied yet. */
  readonly #pending = new Set<Promise<void>>();

  constructor(ctx: CloudContext, options: { lingerMs?: number } = {}) {
    this.#ctx = ctx;
    this.#batches = new StatementBatches((reports) => this.#applyAll(reports), {
      maxRows: REPORTS_PER_STATEMENT,
      maxHeld: REPORTS_HELD_MAX,
      maxInFlight: 1,
      lingerMs: options.lingerMs ?? REPORT_LINGER_MS,
      holdUntil: () => ctx.foreground.quiet(REPORT_HOLD_MAX_MS),
    });
  }

  /**
   * Applies a report if `signed` says its signature holds and it is newer than what the cloud holds of its
   * object; says what became of it. Reports are applied in the order they are handed on.
   */
  apply(report: PositionReport, signed: () => Promise<boolean>): Promise<PositionResult> {
    const applied = this.#batches.submit({ report, signed });
    const forget = () => {
      this.#pending.delete(settled);
    };
    const settled: Promise<void> = applied.then(forget, forget);
    this.#pending.add(settled);
    return applied;
  }

  /** Resolves once every report handed on so far is applied, starting them without their linger (tests, a stop). */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) {
      this.#batches.flush();
      await Promise.all(this.#pending);
    }
  }

  async #applyAll(handed: Handed[]): Promise<PositionResult[]> {
    const signed = await Promise.all(handed.map((each) => each.signed()));
    const latest = this.#ctx.clock.now().getTime() + FUTURE_TOLERANCE_MS;
    const verdicts = handed.map((each, i): PositionResult | null =>
      !signed[i] ? 'bad_signature' : each.report.changed_at > latest ? 'future' : null,
    );
    const reports = handed.filter((_, i) => verdicts[i] === null).map((each) => each.report);
    const applied = reports.length > 0 ? await this.#written(reports) : [];
    let next = 0;
    return verdicts.map((verdict) => verdict ?? applied[next++]!);
  }

  async #written(reports: PositionReport[]): Promise<PositionResult[]> {
    try {
      return await this.#inOneStatement(reports);
    } catch (error) {
      if (reports.length === 1) throw error;
      this.#ctx.log.warn({ err: error, reports: reports.length }, 'applying position reports one by one');
      return Promise.all(reports.map(async (report) => (await this.#inOneStatement([report]))[0]!));
    }
  }

  /**
   * The reports through apply_position_reports, in one statement: one round trip and one commit. The function
   * takes them in the order of their objects, each object's in the order received, so that instances applying
   * reports of the same objects at once lock them in the same order and take turns rather than deadlock.
   */
  async #inOneStatement(reports: PositionReport[]): Promise<PositionResult[]> {
    const column = <T>(pick: (report: PositionReport) => T) => reports.map(pick);
    const { rows } = await sql<Record<string, unknown>>`
      select report_n, report_result from apply_position_reports(
          ${column((r) => r.device_id)}::text[], ${column((r) => r.object)}::text[],
          ${column((r) => r.position)}::text[], ${column((r) => String(r.changed_at))}::bigint[],
          ${column((r) => JSON.stringify(r))}::jsonb[], ${this.#ctx.clock.now()}::timestamptz)`.execute(
      this.#ctx.db,
    );
    const byPosition = new Map(
      rows.map((row) => {
        const { report_n, report_result } = readRow(applyPositionReportsResult, row);
        return [report_n, report_result];
      }),
    );
    return reports.map((_, i) => {
      const result = byPosition.get(i + 1);
      if (!result || !RESULTS.has(result)) throw new Error(`no result for position report ${i + 1}`);
      return result as PositionResult;
    });
  }
}
