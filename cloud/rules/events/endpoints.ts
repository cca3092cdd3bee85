import { sql } from 'kysely';
import { ApiError } from '../../../shared/errors.js';
import type { Database } from '../../foundation/db/database.js';
import { type CallbackAddressContext, checkCallbackAddress } from '../companies/callback-address.js';
import { changeCompany } from '../company-changes/company-changes.js';
import { type ActingMember, recordMemberAction } from '../member-actions/member-actions.js';
import { wakeEventDelivery } from './events-wake.js';
import { dropHeldEvents, sendHeldEvents } from './held-events.js';
import { makeSigningSecret, storeSigningSecret } from './signing-secrets.js';

/**
 * A company's endpoints (docs/design.md section 6.2): the callback addresses its events are delivered to, each
 * with the kinds it takes (./callback-kinds.ts), its signing secrets (./signing-secrets.ts), its delivery state
 * and its log (./delivery-store.ts). An endpoint is made with its first signing secret, in one transaction, so
 * no delivery goes out signed `v1a` alone. The first endpoint a company makes, with none before it, takes the
 * events held until then (./held-events.ts), unless the member drops them; any other starts with the events
 * written after it.
 *
 * Every change locks the company's row first (`for update`): writing an event locks it `for key share`, so an
 * event is either written before the change, and settled by it, or after it, and given its rows with the
 * endpoints as changed (events-to-endpoints.sql); and two adds sent at once count each other.
 */

/** Enough for a receiver per system (an ERP, a chat, a warehouse) and their staging twins. */
export const MAX_ENDPOINTS = 10;

/** An endpoint named by a company's member: the rules that act on one check it is that company's. */
export interface EndpointRef {
  companyId: number;
  endpointId: number;
}

export interface Endpoint {
  id: number;
  url: string;
  /** The kinds it takes; null for every kind, kinds added later included. */
  kinds: string[] | null;
  createdAt: Date;
}

/** The company's endpoints, oldest first. */
export async function listEndpoints(db: Database, companyId: number): Promise<Endpoint[]> {
  const rows = await db
    .selectFrom('endpoints')
    .select(['id', 'url', 'kinds', 'created_at'])
    .where('company_id', '=', companyId)
    .orderBy('id')
    .execute();
  return rows.map(endpointOf);
}

/** The company's endpoint `endpointId`; null when it has none of that id (another company's, or removed). */
export async function findEndpoint(
  db: Database,
  companyId: number,
  endpointId: number,
): Promise<Endpoint | null> {
  const row = await db
    .selectFrom('endpoints')
    .select(['id', 'url', 'kinds', 'created_at'])
    .where('company_id', '=', companyId)
    .where('id', '=', endpointId)
    .executeTakeFirst();
  return row ? endpointOf(row) : null;
}

/**
 * Adds an endpoint after checking its address; a refused one changes nothing. Returns it with its first signing
 * secret, to be shown once. `dropHeldUpTo` drops the events held while the company had no endpoint, up to that
 * `seq` (./held-events.ts), in the same transaction, so that no delivery sends them in between; the rest go to
 * it, oldest first. Throws `too_many_endpoints` past `MAX_ENDPOINTS`, and `endpoint_exists` for an address the
 * company has already: the same form sent twice (a reload of its answer, a double click) adds one endpoint and
 * shows one secret.
 */
export async function addEndpoint(
  ctx: CallbackAddressContext,
  companyId: number,
  text: string,
  options: { dropHeldUpTo?: string; by?: ActingMember } = {},
): Promise<{ endpoint: Endpoint; signingSecret: string }> {
  // Counted before the address is looked up, which is wasted on a company that may add none; again under the lock.
  if ((await listEndpoints(ctx.db, companyId)).length >= MAX_ENDPOINTS)
    throw new ApiError('too_many_endpoints');
  const url = await checkedAddress(ctx, text);
  const made = await makeSigningSecret(ctx.db);
  const now = ctx.clock.now();
  const endpoint = await changeCompany(ctx, companyId, async ({ db }) => {
    const existing = await lockedEndpoints(db, companyId);
    if (existing.length >= MAX_ENDPOINTS) throw new ApiError('too_many_endpoints');
    if (existing.some((other) => other.url === url)) throw new ApiError('endpoint_exists');
    const row = await db
      .insertInto('endpoints')
      .values({ company_id: companyId, url, created_at: now })
      .returning(['id', 'url', 'kinds', 'created_at'])
      .executeTakeFirstOrThrow();
    if (existing.length === 0) {
      if (options.dropHeldUpTo !== undefined) await dropHeldEvents(db, companyId, options.dropHeldUpTo);
      await sendHeldEvents(db, companyId, row.id);
    }
    await storeSigningSecret(db, { companyId, endpointId: row.id }, made, { replaces: 0, now });
    await mirrorFirstEndpoint(db, companyId);
    // Events written while there was no endpoint woke no delivery worker (events-notify.sql): this does.
    await wakeEventDelivery(db);
    if (options.by) {
      const detail = options.dropHeldUpTo === undefined ? url : `${url} (waiting events dropped)`;
      await recordMemberAction(db, now, { companyId, by: options.by, name: 'endpoint-added', detail });
    }
    return endpointOf(row);
  });
  return { endpoint, signingSecret: made.secret };
}

/**
 * Moves an endpoint to another address, checked as a new one; its kinds, secrets and events stay. An endpoint
 * failing at the old address is given a fresh start at the new one by the next claim (./delivery-store.ts).
 * Returns the address saved, or null when the company has no such endpoint; throws `endpoint_exists` for the
 * address of another of its endpoints.
 */
export async function changeEndpointAddress(
  ctx: CallbackAddressContext,
  companyId: number,
  endpointId: number,
  text: string,
  by?: ActingMember,
): Promise<string | null> {
  const url = await checkedAddress(ctx, text);
  return changeCompany(ctx, companyId, async ({ db }) => {
    const endpoints = await lockedEndpoints(db, companyId);
    const before = endpoints.find((endpoint) => endpoint.id === endpointId);
    if (!before) return null;
    if (endpoints.some((other) => other.id !== endpointId && other.url === url)) {
      throw new ApiError('endpoint_exists');
    }
    await db.updateTable('endpoints').set({ url }).where('id', '=', endpointId).execute();
    await mirrorFirstEndpoint(db, companyId);
    await wakeEventDelivery(db);
    if (by && before.url !== url) {
      const detail = `${url} (was ${before.url})`;
      await recordMemberAction(db, ctx.clock.now(), { companyId, by, name: 'callback-saved', detail });
    }
    return url;
  });
}

/**
 * Removes an endpoint with its secrets and its place in every event; the events themselves stay for the other
 * endpoints, `listen` and the events page, and its log stays for its 30 days. Returns the removed address, or
 * null when the company has no such endpoint.
 */
export async function removeEndpoint(
  ctx: CallbackAddressContext,
  companyId: number,
  endpointId: number,
  by?: ActingMember,
): Promise<string | null> {
  return changeCompany(ctx, companyId, async ({ db }) => {
    const endpoints = await lockedEndpoints(db, companyId);
    if (endpoints.length === 1 && endpoints[0]!.id === endpointId)
      await passOverUntaken(db, companyId, endpointId);
    const removed = await db
      .deleteFrom('endpoints')
      .where('id', '=', endpointId)
      .where('company_id', '=', companyId)
      .returning('url')
      .executeTakeFirst();
    if (!removed) return null;
    await mirrorFirstEndpoint(db, companyId);
    if (by) {
      await recordMemberAction(db, ctx.clock.now(), {
        companyId,
        by,
        name: 'callback-removed',
        detail: removed.url,
      });
    }
    return removed.url;
  });
}

/**
 * Keeps `companies.callback_url` and `callback_kinds` as the first endpoint's (docs/design.md section 6.2): what a
 * previous release reads as the company's one address, during a rolling upgrade or after a rollback. Written
 * after the endpoints, so previous-release-callback.sql finds them already alike. Inside a company change.
 */
export async function mirrorFirstEndpoint(db: Database, companyId: number): Promise<void> {
  const first = await db
    .selectFrom('endpoints')
    .select(['url', 'kinds'])
    .where('company_id', '=', companyId)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  await db
    .updateTable('companies')
    .set({ callback_url: first?.url ?? null, callback_kinds: first?.kinds ?? null })
    .where('id', '=', companyId)
    .execute();
}

/**
 * The company's last endpoint goes: the events it did not take are passed over (`to_callback` false), as a
 * change of kinds passes them over, so that only those it was still to send are held for the next first endpoint
 * (./held-events.ts).
 */
async function passOverUntaken(db: Database, companyId: number, endpointId: number): Promise<void> {
  await sql`
    update events as event set to_callback = false
     where event.company_id = ${companyId} and event.delivered_at is null and event.to_callback is null
       and not exists (select 1 from endpoint_events as place
                        where place.event_id = event.id and place.endpoint_id = ${endpointId})`.execute(db);
}

/** Locks the company's row (see above) and reads its endpoints. */
async function lockedEndpoints(db: Database, companyId: number): Promise<Endpoint[]> {
  await db.selectFrom('companies').select('id').where('id', '=', companyId).forUpdate().execute();
  return listEndpoints(db, companyId);
}

async function checkedAddress(ctx: CallbackAddressContext, text: string): Promise<string> {
  const checked = await checkCallbackAddress(text, {
    resolve: ctx.resolveHost,
    allowPrivate: ctx.config.allowPrivateCallbacks,
  });
  if (!checked.ok)
    throw new ApiError('callback_refused', { field: 'callback_url', message: checked.problem });
  return checked.url.href;
}

function endpointOf(row: { id: number; url: string; kinds: string[] | null; created_at: Date }): Endpoint {
  return { id: row.id, url: row.url, kinds: row.kinds, createdAt: new Date(row.created_at) };
}
