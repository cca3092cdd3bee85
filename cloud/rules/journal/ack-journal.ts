import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Ack } from '../../../shared/protocol/messages.js';
import type { CloudContext } from '../../foundation/context.js';
import { StatementBatches } from '../../foundation/db/statement-batches.js';
import { ackOutcome, applyAck, lateDetailOf } from './journal.js';

/**
 * Acknowledgements written into the journal many at a time (docs/design.md section 5.1). An ack is accepted
 * from its controller only once its entry is committed, and a broker hands one controller's packets over one
 * after another, so each commit holds up that controller's next packet. Acks of different controllers arriving
 * together share one statement and one commit instead, each through complete_entry_signed exactly as alone: once per
 * command, with its event. A batch the database refuses is applied ack by ack, so that one bad ack never holds
 * up the others.
 */
export class AckJournal {
  readonly #ctx: CloudContext;
  readonly #batches = new StatementBatches<Ack, boolean>((acks) => this.#applyAll(acks), {
    maxRows: 128,
    maxInFlight: 2,
  });

  constructor(ctx: CloudContext) {
    this.#ctx = ctx;
  }

  /**
   * Applies an acknowledgement once; false for a repeat, an unknown command or another device's command. Each
   * one applied counts in `acks_applied_total` (docs/design.md section 8.1).
   */
  async apply(ack: Ack): Promise<boolean> {
    const applied = await this.#batches.submit(ack);
    if (applied) this.#ctx.metrics.ackApplied();
    return applied;
  }

  async #applyAll(acks: Ack[]): Promise<boolean[]> {
    if (acks.length === 1) return [await applyAck(this.#ctx, acks[0]!)];
    try {
      return await this.#inOneStatement(acks);
    } catch (error) {
      this.#ctx.log.warn({ err: error, acks: acks.length }, 'applying acknowledgements one by one');
      return Promise.all(acks.map((ack) => applyAck(this.#ctx, ack)));
    }
  }

  /** complete_entry_signed for each ack, in order, in one statement: one round trip and one commit. */
  async #inOneStatement(acks: Ack[]): Promise<boolean[]> {
    const rows = acks.map((ack) => ({ ack, ...ackOutcome(ack) }));
    const column = <T>(pick: (row: (typeof rows)[number]) => T) => rows.map(pick);
    const { rows: applied } = await sql<{ n: string | number; id: number | null }>`
      select batch.n, complete_entry_signed(null, batch.command_id, batch.device_id, batch.outcome,
          batch.detail, batch.late_detail, batch.acked_at, ${this.#ctx.clock.now()}::timestamptz, batch.event_id,
          batch.ack::jsonb) as id
        from unnest(
          ${column((r) => r.ack.command_id)}::uuid[], ${column((r) => r.ack.device_id)}::text[],
          ${column((r) => r.outcome)}::text[], ${column((r) => r.detail)}::text[],
          ${column((r) => lateDetailOf(r.detail))}::text[],
          ${column((r) => new Date(r.ack.finished_at).toISOString())}::timestamptz[], ${column(() => randomUUID())}::uuid[],
          ${column((r) => JSON.stringify(r.ack))}::text[]
        ) with ordinality as batch (command_id, device_id, outcome, detail, late_detail, acked_at, event_id, ack, n)
       order by batch.n`.execute(this.#ctx.db);
    const byPosition = new Map(applied.map((row) => [Number(row.n), row.id !== null]));
    return acks.map((_, i) => byPosition.get(i + 1) ?? false);
  }
}
