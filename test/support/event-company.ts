import type { AssembledContext } from '../../cloud/context.js';
import { createCompany } from '../../cloud/rules/companies/companies.js';
import { mirrorFirstEndpoint } from '../../cloud/rules/events/endpoints.js';
import { ping } from '../../cloud/rules/events/event-data.js';
import { sendHeldEvents } from '../../cloud/rules/events/held-events.js';
import { enqueueEvent } from '../../cloud/rules/events/outbox.js';
import { rotateSigningSecret } from '../../cloud/rules/events/signing-secrets.js';

/**
 * What the event delivery's suites share: a company with a callback address, its first endpoint, set straight in
 * the database (the address is checked where a member saves it, cloud/rules/events/endpoints.ts), and test
 * events in its outbox.
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

/**
 * Sets the address of the company's first endpoint, making it (with the events held until then) when there is
 * none, or removes it (`null`).
 */
export async function setCallback(
  ctx: AssembledContext,
  companyId: number,
  url: string | null,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const first = await firstEndpoint(trx, companyId);
    if (url === null) {
      if (first) await trx.deleteFrom('endpoints').where('id', '=', first.id).execute();
    } else if (first) {
      await trx.updateTable('endpoints').set({ url }).where('id', '=', first.id).execute();
    } else {
      // As a first endpoint added by a member takes the events held until then (held-events.ts).
      const made = await trx
        .insertInto('endpoints')
        .values({ company_id: companyId, url })
        .returning('id')
        .executeTakeFirstOrThrow();
      await sendHeldEvents(trx, companyId, made.id);
    }
    await mirrorFirstEndpoint(trx, companyId);
  });
}

/**
 * A signing secret of the company's first endpoint, made at `url` when the company has none (by default an
 * address on loopback that nothing listens on, for suites that read events through `listen` only).
 */
export async function firstSigningSecret(
  ctx: AssembledContext,
  companyId: number,
  url = 'http://127.0.0.1:9/unused',
): Promise<string> {
  const endpoint = (await firstEndpoint(ctx.db, companyId)) ?? {
    id: await addEndpointRow(ctx, companyId, url),
  };
  await mirrorFirstEndpoint(ctx.db, companyId);
  const row = await ctx.db
    .selectFrom('endpoints')
    .select('url')
    .where('id', '=', endpoint.id)
    .executeTakeFirstOrThrow();
  const replaces =
    (
      await ctx.db
        .selectFrom('callback_secrets')
        .select('id')
        .where('endpoint_id', '=', endpoint.id)
        .where('retires_at', 'is', null)
        .executeTakeFirst()
    )?.id ?? 0;
  const secret = await rotateSigningSecret(
    ctx,
    { companyId, endpointId: endpoint.id, url: row.url },
    replaces,
  );
  if (!secret) throw new Error('the signing secret was not made');
  return secret;
}

/** A further endpoint of the company, taking `kinds` (null: every kind); its id. */
export async function addEndpointRow(
  ctx: AssembledContext,
  companyId: number,
  url: string,
  kinds: string[] | null = null,
): Promise<number> {
  const row = await ctx.db
    .insertInto('endpoints')
    .values({ company_id: companyId, url, kinds })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** `count` test events of the company, each committed on its own as a change would commit it. */
export async function enqueuePings(ctx: AssembledContext, companyId: number, count = 1): Promise<void> {
  for (let i = 0; i < count; i++) {
    await ctx.db
      .transaction()
      .execute((trx) => enqueueEvent(trx, { companyId, type: 'ping', at: ctx.clock.now(), data: ping() }));
  }
}

/**
 * The company's events in the order they were written, with where they stand at its first endpoint (or at the
 * endpoint named): attempts, delivered and next attempt are null and 0 for an event it does not take.
 */
export async function outbox(ctx: AssembledContext, companyId: number, endpointId?: number) {
  const endpoint = endpointId ?? (await firstEndpoint(ctx.db, companyId))?.id ?? 0;
  const rows = await ctx.db
    .selectFrom('events as event')
    .leftJoin('endpoint_events as place', (join) =>
      join.onRef('place.event_id', '=', 'event.id').on('place.endpoint_id', '=', endpoint),
    )
    .select(['event.id', 'event.type', 'place.attempts', 'place.delivered_at', 'place.next_attempt_at'])
    .where('event.company_id', '=', companyId)
    .orderBy('event.seq')
    .execute();
  return rows.map((row) => ({
    ...row,
    attempts: row.attempts ?? 0,
    delivered_at: row.delivered_at ?? null,
    next_attempt_at: row.next_attempt_at ?? null,
  }));
}

/** The state of the company's first endpoint, in the names the one address had on the company's row. */
export async function endpointRow(ctx: AssembledContext, companyId: number) {
  const row = await ctx.db
    .selectFrom('endpoints')
    .select(['url', 'failing_since', 'failing_url', 'last_error', 'paused_until'])
    .where('company_id', '=', companyId)
    .orderBy('id')
    .limit(1)
    .executeTakeFirstOrThrow();
  return {
    callback_url: row.url,
    callback_failing_since: row.failing_since,
    callback_failing_url: row.failing_url,
    callback_last_error: row.last_error,
    callback_paused_until: row.paused_until,
  };
}

/** The company's first endpoint, as the rules that act on one endpoint name it. */
export async function firstEndpointOf(
  ctx: AssembledContext,
  companyId: number,
): Promise<{ companyId: number; endpointId: number }> {
  const first = await firstEndpoint(ctx.db, companyId);
  if (!first) throw new Error(`company ${companyId} has no endpoint`);
  return { companyId, endpointId: first.id };
}

async function firstEndpoint(db: AssembledContext['db'], companyId: number) {
  return db
    .selectFrom('endpoints')
    .select('id')
    .where('company_id', '=', companyId)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}
