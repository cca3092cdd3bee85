import { EVENT_EXAMPLES, type EventKind } from '../../../shared/company-api/events.js';
import type { CloudContext } from '../../foundation/context.js';
import { enqueueEvent } from './outbox.js';

/**
 * `trigger` (docs/design.md section 6.1): a sample event of any kind, so a developer tries a receiver without a
 * customer or a gate. Its data is the kind's example from cloud/README.md, which names no real request, key or
 * barrier; its id and time are new. It goes through the outbox like any event, so it is delivered, retried and
 * logged as a real one would be, and reaches every `listen` of the company.
 */
export async function triggerSample(
  ctx: Pick<CloudContext, 'db' | 'clock'>,
  companyId: number,
  kind: EventKind,
): Promise<{ id: string; type: EventKind }> {
  const { data } = EVENT_EXAMPLES[kind];
  const id = await ctx.db
    .transaction()
    .execute((trx) => enqueueEvent(trx, { companyId, type: kind, at: ctx.clock.now(), data }));
  return { id, type: kind };
}
