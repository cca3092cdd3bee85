import type { AssembledContext } from '../../cloud/context.js';
import { createCompany } from '../../cloud/rules/companies/companies.js';
import { ping } from '../../cloud/rules/events/event-data.js';
import { enqueueEvent } from '../../cloud/rules/events/outbox.js';

/**
 * What the event delivery's suites share: a company with a callback address, set straight in the database (the
 * address is checked where a member saves it, cloud/rules/companies/callback-address.ts), and test events in its outbox.
 */
export async function callbackCompany(
  ctx: AssembledContext,
  name: string,
  callbackUrl: string | null,
): Promise<number> {
  const company = await createCompany(ctx, { name });
  await setCallback(ctx, company.id, callbackUrl);
  return company.id;
}

export async function setCallback(
  ctx: AssembledContext,
  companyId: number,
  url: string | null,
): Promise<void> {
  await ctx.db.updateTable('companies').set({ callback_url: url }).where('id', '=', companyId).execute();
}

/** `count` test events of the company, each committed on its own as a change would commit it. */
export async function enqueuePings(ctx: AssembledContext, companyId: number, count = 1): Promise<void> {
  for (let i = 0; i < count; i++) {
    await ctx.db
      .transaction()
      .execute((trx) => enqueueEvent(trx, { companyId, type: 'ping', at: ctx.clock.now(), data: ping() }));
  }
}

/** The company's events in the order they were written, with their state. */
export async function outbox(ctx: AssembledContext, companyId: number) {
  return ctx.db
    .selectFrom('events')
    .select(['id', 'type', 'attempts', 'delivered_at', 'next_attempt_at'])
    .where('company_id', '=', companyId)
    .orderBy('seq')
    .execute();
}

export async function endpointRow(ctx: AssembledContext, companyId: number) {
  return ctx.db
    .selectFrom('companies')
    .select([
      'callback_url',
      'callback_failing_since',
      'callback_failing_url',
      'callback_last_error',
      'callback_paused_until',
    ])
    .where('id', '=', companyId)
    .executeTakeFirstOrThrow();
}
