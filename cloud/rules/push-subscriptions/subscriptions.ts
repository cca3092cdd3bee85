import { isIP } from 'node:net';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { nonPublicRange } from '../domain-keys/public-address.js';
import { deviceName } from './device-name.js';
import type { SubscriptionShape } from './subscription-shape.js';

/**
 * A customer's browsers with notifications on (docs/design.md section 10.6): turning them on, the list, a name
 * and removal. An endpoint belongs to one account: posting one that another account holds changes nothing of
 * theirs, and another customer's subscription is answered as one that does not exist.
 */

/** Every address a host name resolves to; cloud/links/outbound-http/safe-connection.ts's `Resolver` is one. */
export type HostResolver = (hostname: string) => Promise<readonly { address: string }[]>;

/** What subscribing stands on beyond the ground: resolving the endpoint's host as the delivery will. */
export interface PushSubscriptionsContext extends CloudContext {
  readonly resolveHost: HostResolver;
}

/** Browsers per account: a person has a few devices; more is a script filling the table. */
export const MAX_SUBSCRIPTIONS = 20;
export const MAX_SUBSCRIPTION_NAME_LENGTH = 60;

export interface PushSubscription {
  id: number;
  name: string;
  createdAt: Date;
  lastDeliveredAt: Date | null;
}

/**
 * Keeps the browser's subscription for the customer, named after its user agent; the same endpoint again from
 * the same account takes its new keys and keeps its name. Refused: an endpoint that is not https or whose host
 * is not public (the test switch GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS lets loopback and http through, as for
 * callbacks), one another account holds, and one more than MAX_SUBSCRIPTIONS. Returns its id.
 */
export async function subscribe(
  ctx: PushSubscriptionsContext,
  input: { customerId: number; subscription: SubscriptionShape; userAgent: string | undefined },
): Promise<number> {
  const endpoint = await checkedEndpoint(ctx, input.subscription.endpoint);
  const { p256dh, auth } = input.subscription.keys;
  return ctx.db.transaction().execute(async (trx) => {
    // The account's row is locked first, so two browsers subscribing at once both count each other.
    await trx.selectFrom('customers').select('id').where('id', '=', input.customerId).forUpdate().execute();
    const held = await trx
      .selectFrom('push_subscriptions')
      .select(['id', 'customer_id'])
      .where('endpoint', '=', endpoint)
      .executeTakeFirst();
    if (held && held.customer_id !== input.customerId) {
      throw new ApiError('push_subscription_refused', {
        field: 'endpoint',
        message:
          'This browser already gets notifications for another Gatelink account: turn them off there first.',
      });
    }
    if (held) {
      await trx.updateTable('push_subscriptions').set({ p256dh, auth }).where('id', '=', held.id).execute();
      return held.id;
    }
    const { count } = await trx
      .selectFrom('push_subscriptions')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('customer_id', '=', input.customerId)
      .executeTakeFirstOrThrow();
    if (Number(count) >= MAX_SUBSCRIPTIONS) throw new ApiError('too_many_push_devices');
    const row = await trx
      .insertInto('push_subscriptions')
      .values({
        customer_id: input.customerId,
        endpoint,
        p256dh,
        auth,
        name: deviceName(input.userAgent),
        created_at: ctx.clock.now(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  });
}

export async function listSubscriptions(ctx: CloudContext, customerId: number): Promise<PushSubscription[]> {
  const rows = await ctx.db
    .selectFrom('push_subscriptions')
    .select(['id', 'name', 'created_at', 'last_delivered_at'])
    .where('customer_id', '=', customerId)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    createdAt: row.created_at,
    lastDeliveredAt: row.last_delivered_at,
  }));
}

export async function renameSubscription(
  ctx: CloudContext,
  input: { customerId: number; subscriptionId: number; name: string },
): Promise<void> {
  const result = await ctx.db
    .updateTable('push_subscriptions')
    .set({ name: input.name })
    .where('id', '=', input.subscriptionId)
    .where('customer_id', '=', input.customerId)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw noSuchSubscription();
}

/** Removes it and what was waiting to be sent to it (the outbox rows go with it). */
export async function removeSubscription(
  ctx: CloudContext,
  input: { customerId: number; subscriptionId: number },
): Promise<void> {
  const result = await ctx.db
    .deleteFrom('push_subscriptions')
    .where('id', '=', input.subscriptionId)
    .where('customer_id', '=', input.customerId)
    .executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw noSuchSubscription();
}

function noSuchSubscription(): ApiError {
  return new ApiError('not_found', {
    message: 'There is no such device with notifications on your account.',
  });
}

/**
 * The endpoint as stored, once it passed the address rules of callbacks (docs/design.md section 6): https,
 * without credentials, on a host that is and resolves only to public addresses. Checked again on the address
 * actually connected to at every delivery, since a name may resolve elsewhere later.
 */
async function checkedEndpoint(ctx: PushSubscriptionsContext, text: string): Promise<string> {
  const allowPrivate = ctx.config.allowPrivateCallbacks;
  const refuse = (message: string) =>
    new ApiError('push_subscription_refused', { field: 'endpoint', message });
  const url = URL.parse(text);
  if (!url || !(url.protocol === 'https:' || (allowPrivate && url.protocol === 'http:'))) {
    throw refuse('The push service address must start with https://.');
  }
  if (url.username || url.password) throw refuse('The push service address must not hold a user name.');
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (allowPrivate) return url.href;
  let addresses: string[];
  if (isIP(host) !== 0) {
    addresses = [host];
  } else {
    try {
      addresses = (await ctx.resolveHost(host)).map((answer) => answer.address);
    } catch {
      throw refuse(`The push service ${host} could not be resolved in DNS.`);
    }
    if (addresses.length === 0) throw refuse(`The push service ${host} has no address in DNS.`);
  }
  for (const address of addresses) {
    const range = nonPublicRange(address);
    if (range)
      throw refuse(
        `The push service ${host} is at ${address}, a ${range} address; only public ones are used.`,
      );
  }
  return url.href;
}
