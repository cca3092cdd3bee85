import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { MAX_ID } from '../../foundation/http/validation.js';
import { countAttempt } from '../../foundation/web/attempt-limit.js';
import { parseForm } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { signedIn } from '../../foundation/web/web-deps.js';
import { findAccount } from '../../rules/customers/accounts.js';
import { CEREMONY_ID, CEREMONY_LIMIT } from '../../rules/passkeys/challenges.js';
import { removePasskey, renamePasskey, savePasskey } from '../../rules/passkeys/passkeys.js';
import { finishRegistration, startRegistration } from '../../rules/passkeys/registration.js';
import { registrationResponse } from '../../rules/passkeys/response-schema.js';
import { passkeyName, readJson } from './account-input.js';
import { sendAccountPage } from './account-routes.js';
import { clientKey } from './account-session.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';

/**
 * The signed-in customer's passkeys (docs/design.md section 10.2): adding one (the two calls of its ceremony,
 * bound to this customer), renaming and removing one. Another customer's passkey is answered as one that does
 * not exist, and the last way into an account is not removed.
 */
const passkeyParams = z.object({ id: z.coerce.number().int().positive().max(MAX_ID) });
const finishBody = z.object({
  ceremony: z.string().regex(CEREMONY_ID, 'Start again: the passkey request is not valid'),
  response: registrationResponse,
});

export async function passkeyRoutes(app: FastifyInstance, deps: CustomerPagesDeps): Promise<void> {
  app.post('/account/passkeys/options', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    await countAttempt(deps.ctx, CEREMONY_LIMIT, clientKey(request));
    const account = (await findAccount(deps.ctx, customer.customerId))!;
    return startRegistration(deps.ctx, {
      purpose: 'add',
      customerId: account.id,
      displayName: account.displayName,
      userName: account.email ?? account.displayName,
    });
  });

  app.post('/account/passkeys/verify', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const body = readJson(finishBody, request.body);
    const { credential } = await finishRegistration(deps.ctx, {
      ceremony: body.ceremony,
      purpose: 'add',
      customerId: customer.customerId,
      response: body.response,
    });
    await savePasskey(deps.ctx.db, {
      customerId: customer.customerId,
      credential,
      now: deps.ctx.clock.now(),
    });
    return { redirect: '/account?done=passkey-added' };
  });

  app.post('/account/passkeys/:id/name', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const { id } = readJson(passkeyParams, request.params);
    const form = parseForm(z.object({ name: passkeyName }), request.body);
    if (!form.ok) {
      const errors = { [`passkey-${id}`]: form.errors.name ?? 'Enter a name for the passkey' };
      return sendAccountPage(deps, request, reply, { errors }, 400);
    }
    await renamePasskey(deps.ctx, { customerId: customer.customerId, passkeyId: id, name: form.value.name });
    return reply.redirect('/account?done=passkey-renamed', 303);
  });

  app.post('/account/passkeys/:id/remove', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const { id } = readJson(passkeyParams, request.params);
    const removed = await onForm(reply, ['last_way_in'], () =>
      removePasskey(deps.ctx, { customerId: customer.customerId, passkeyId: id }),
    );
    if (!removed.ok) {
      return sendAccountPage(
        deps,
        request,
        reply,
        { errors: { [`passkey-${id}-remove`]: removed.message } },
        409,
      );
    }
    return reply.redirect('/account?done=passkey-removed', 303);
  });
}
