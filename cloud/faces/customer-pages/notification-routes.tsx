import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { MAX_ID } from '../../foundation/http/validation.js';
import { parseForm } from '../../foundation/web/form-input.js';
import { signedIn } from '../../foundation/web/web-deps.js';
import { subscriptionShape } from '../../rules/push-subscriptions/subscription-shape.js';
import {
  removeSubscription,
  renameSubscription,
  subscribe,
} from '../../rules/push-subscriptions/subscriptions.js';
import { readJson, subscriptionName } from './account-input.js';
import { sendAccountPage } from './account-routes.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';
import { NOTIFICATIONS_PATH } from './notification-card.js';

/**
 * The signed-in customer's browsers with notifications on (docs/design.md section 10.6): the subscription the
 * account page's script posts as JSON with the page's CSRF token, and the forms that rename and remove one.
 * Another customer's subscription is answered as one that does not exist.
 */
const subscriptionParams = z.object({ id: z.coerce.number().int().positive().max(MAX_ID) });

export async function notificationRoutes(app: FastifyInstance, deps: CustomerPagesDeps): Promise<void> {
  app.post(NOTIFICATIONS_PATH, async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const read = subscriptionShape.safeParse(request.body);
    if (!read.success) {
      const issue = read.error.issues[0]!;
      const field = issue.path.join('.') || 'subscription';
      throw new ApiError('push_subscription_refused', {
        field,
        message: `The browser's subscription is not usable: ${field} ${issue.message}.`,
      });
    }
    await subscribe(deps.ctx, {
      customerId: customer.customerId,
      subscription: read.data,
      userAgent: request.headers['user-agent'],
    });
    return { redirect: '/account?done=notifications-on' };
  });

  app.post(`${NOTIFICATIONS_PATH}/:id/name`, async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const { id } = readJson(subscriptionParams, request.params);
    const form = parseForm(z.object({ name: subscriptionName }), request.body);
    if (!form.ok) {
      const errors = { [`notification-${id}`]: form.errors.name ?? 'Enter a name for the browser' };
      return sendAccountPage(deps, request, reply, { errors }, 400);
    }
    await renameSubscription(deps.ctx, {
      customerId: customer.customerId,
      subscriptionId: id,
      name: form.value.name,
    });
    return reply.redirect('/account?done=notification-renamed', 303);
  });

  app.post(`${NOTIFICATIONS_PATH}/:id/remove`, async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const { id } = readJson(subscriptionParams, request.params);
    await removeSubscription(deps.ctx, { customerId: customer.customerId, subscriptionId: id });
    return reply.redirect('/account?done=notification-removed', 303);
  });
}
