import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { isCode, normalizeCode } from '../../../shared/codes.js';
import { ApiError } from '../../../shared/errors.js';
import { type AttemptLimit, countAttempt } from '../../foundation/web/attempt-limit.js';
import { clientAddressKey } from '../../foundation/web/client-address.js';
import { formText, parseForm, textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import type { Session } from '../../foundation/web/sessions.js';
import { pageContext, safeNext, signedIn } from '../../foundation/web/web-deps.js';
import { isTimeZone } from '../../foundation/zones/wall-clock.js';
import { accessHistory } from '../../rules/access-keys/access-history.js';
import { revokeAccessKey } from '../../rules/access-keys/access-keys.js';
import { companiesWithAccess, keyOnBarrier, keysOnBarrier } from '../../rules/access-keys/keys-on-barrier.js';
import { setBarrierTimeZone } from '../../rules/devices/barrier-zone.js';
import {
  barrierNameProblem,
  barrierObjects,
  type CustomerBarrier,
  customerBarrier,
  customerBarriers,
  renameBarrier,
} from '../../rules/devices/customer-barriers.js';
import { removeBarrier, replaceController } from '../../rules/devices/device-lifecycle.js';
import { PAIRING_CODE_LENGTH, pairDevice } from '../../rules/devices/devices.js';
import { phoneState } from '../../rules/devices/phone-state.js';
import { householdOf } from '../../rules/households/members.js';
import { choiceOf } from '../../rules/notification-choices/choices.js';
import { mayAskToCall } from '../../rules/opening-questions/asking.js';
import { openQuestions } from '../../rules/opening-questions/question-view.js';
import {
  barrierGates,
  LEFT_OPEN_MINUTES,
  leftOpenGates,
  MOVE_TIMEOUT_SECONDS,
  setGateLimits,
} from '../../rules/positions/gate-display.js';
import { receiptsStatus } from '../../rules/receipts/receipts-status.js';
import { barrierId, DEVICE_ID } from './barrier-address.js';
import { BarrierPage, type BarrierPageProps } from './barrier-page.js';
import { type BarriersNotice, BarriersPage, type PairingForm } from './barriers-page.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';
import { type GateLimitsForm, savedLimitsForm } from './gate-position.js';
import { householdNotice, householdRoutes } from './household-routes.js';

/** What a barrier's page is drawn with besides what it reads: the forms as typed and the last form's notice. */
export type BarrierView = Pick<BarrierPageProps, 'rename' | 'notice' | 'replace' | 'invite'> & {
  gateForm?: GateLimitsForm;
};

/**
 * The customer's barriers (docs/design.md section 10.4): the list and the pairing form, one barrier's page,
 * renaming it, and withdrawing a company's access on it. Every lookup names the signed-in customer and the role
 * the act needs (section 9.2), so another customer's barrier or key, and an act beyond the reader's role,
 * answer 404 exactly like a barrier that does not exist, and leave it as it was.
 *
 * A pairing code has 40 bits and lives 24 hours; pairing attempts (a well-formed code looked up, when adding a
 * barrier or replacing its controller) are limited besides, per signed-in account and per client address, so
 * that guessing one is hopeless even from many accounts. A person with the controller in hand types one code
 * and mistypes a few: 10 an hour per account leaves room for that. The address's 20 is twice as many, so that
 * one account behind a household's router, guessing or fumbling, cannot use up the attempts of the others
 * behind it, while any number of accounts from one address still get 20 between them.
 */
export const PAIRING_LIMITS = {
  perAccount: {
    bucket: 'pairing-attempts:account',
    max: 10,
    windowMs: 3600_000,
    message: (wait) => `Too many pairing codes tried from your account; try again in ${wait}.`,
  },
  perAddress: {
    bucket: 'pairing-attempts',
    max: 20,
    windowMs: 3600_000,
    message: (wait) => `Too many pairing codes tried from your network; try again in ${wait}.`,
  },
} as const satisfies Record<string, AttemptLimit>;

export async function barrierRoutes(app: FastifyInstance, deps: CustomerPagesDeps): Promise<void> {
  const { ctx } = deps;

  app.get('/barriers', async (request, reply) => {
    const customer = signedIn(request, reply);
    if (!customer) return reply;
    const next = safeNext(textField(request.query, 'next'), '');
    return showBarriers(request, reply, customer, { code: '', name: '', next }, 200, barriersNotice(request));
  });

  app.post('/barriers', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const next = safeNext(textField(request.body, 'next'), '');
    const typed = { code: textField(request.body, 'code'), name: textField(request.body, 'name'), next };
    const form = parseForm(PAIRING_FORM, request.body);
    if (!form.ok) return showBarriers(request, reply, customer, { ...typed, errors: form.errors }, 400);
    const counted = await onForm(reply, ['too_many_attempts'], () => countPairingAttempt(request, customer));
    if (!counted.ok) {
      // The code is not kept: past the limit it is the one thing not to send again at once.
      const errors = { code: counted.message };
      return showBarriers(request, reply, customer, { ...typed, code: '', errors }, counted.status);
    }
    let paired: Awaited<ReturnType<typeof pairDevice>>;
    try {
      paired = await pairDevice(ctx, {
        customerId: customer.customerId,
        pairingCode: form.value.code,
        name: form.value.name,
      });
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'pairing_code_invalid') throw error;
      const errors = {
        code: 'This pairing code is unknown, already used or older than 24 hours. Check it, or ask your installer for a new one.',
      };
      return showBarriers(request, reply, customer, { ...typed, errors }, error.status);
    }
    await zoneFromBrowser(request.body, customer, paired.device_id);
    // The list says which barrier was added, found again by its id: the name the customer typed stays out of
    // the address, which browsers keep in their history and servers in their logs.
    return reply.redirect(next || `/barriers?added=${paired.device_id}`, 303);
  });

  app.get('/barriers/:id', async (request, reply) => {
    const customer = signedIn(request, reply);
    if (!customer) return reply;
    const barrier = await customerBarrier(ctx.db, customer.customerId, barrierId(request), 'look');
    return showBarrier(request, reply, customer, barrier.id, {
      rename: { name: barrier.name },
      ...(await noticeOf(request, barrier)),
    });
  });

  app.post('/barriers/:id/name', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const deviceId = barrierId(request);
    // Another customer's barrier, and a member's, is 404 before the name is even looked at.
    await customerBarrier(ctx.db, customer.customerId, deviceId, 'own');
    const form = parseForm(NAME_FORM, request.body);
    if (!form.ok) {
      const rename = { name: textField(request.body, 'name'), errors: form.errors };
      return showBarrier(request, reply, customer, deviceId, { rename }, 400);
    }
    await renameBarrier(ctx.db, { customerId: customer.customerId, deviceId, name: form.value.name });
    return reply.redirect(`/barriers/${deviceId}?renamed=1`, 303);
  });

  app.post('/barriers/:id/gate-limits', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const deviceId = barrierId(request);
    // Another customer's barrier, and a member's, is 404 before the values are even looked at.
    const barrier = await customerBarrier(ctx.db, customer.customerId, deviceId, 'own');
    const form = parseForm(LIMITS_FORM, request.body);
    if (!form.ok) {
      const typed: GateLimitsForm = {
        leftOpenMinutes: textField(request.body, 'left_open_minutes'),
        moveTimeoutSeconds: textField(request.body, 'move_timeout_seconds'),
        errors: form.errors,
      };
      return showBarrier(
        request,
        reply,
        customer,
        deviceId,
        { rename: { name: barrier.name }, gateForm: typed },
        400,
      );
    }
    await setGateLimits(ctx.db, {
      customerId: customer.customerId,
      deviceId,
      limits: {
        leftOpenLimitS: form.value.left_open_minutes * 60,
        moveTimeoutS: form.value.move_timeout_seconds,
      },
    });
    return reply.redirect(`/barriers/${deviceId}?limits=1`, 303);
  });

  app.post('/barriers/:id/keys/:keyRef/withdraw', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const deviceId = barrierId(request);
    const { keyRef } = request.params as { keyRef: string };
    if (!/^\d{1,9}$/.test(keyRef)) throw new ApiError('not_found', { message: 'No such key among yours.' });
    await revokeAccessKey(ctx, { keyRef: Number(keyRef), customerId: customer.customerId, deviceId });
    return reply.redirect(`/barriers/${deviceId}?withdrawn=${keyRef}`, 303);
  });

  await householdRoutes(app, deps, showBarrier);

  app.post('/barriers/:id/remove', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const deviceId = barrierId(request);
    const removed = await removeBarrier(ctx, { customerId: customer.customerId, deviceId });
    return reply.redirect(`/barriers?removed=${removed.revokedKeys}`, 303);
  });

  app.post('/barriers/:id/replace', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const deviceId = barrierId(request);
    const barrier = await customerBarrier(ctx.db, customer.customerId, deviceId, 'own');
    const typed = { code: textField(request.body, 'new_code') };
    const rename = { name: barrier.name };
    const form = parseForm(REPLACE_FORM, request.body);
    if (!form.ok)
      return showBarrier(
        request,
        reply,
        customer,
        deviceId,
        { rename, replace: { ...typed, errors: form.errors } },
        400,
      );
    const counted = await onForm(reply, ['too_many_attempts'], () => countPairingAttempt(request, customer));
    if (!counted.ok) {
      const replace = { code: '', errors: { new_code: counted.message } };
      return showBarrier(request, reply, customer, deviceId, { rename, replace }, counted.status);
    }
    try {
      const replaced = await replaceController(ctx, deps.accounts, {
        oldDeviceId: deviceId,
        customerId: customer.customerId,
        target: { pairingCode: form.value.new_code },
      });
      return reply.redirect(`/barriers/${replaced.newDeviceId}?replaced=1`, 303);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'pairing_code_invalid') throw error;
      const errors = {
        new_code:
          'This pairing code is unknown, already used or expired. On the new controller, gatelink-device pairing-code shows its current code.',
      };
      return showBarrier(
        request,
        reply,
        customer,
        deviceId,
        { rename, replace: { ...typed, errors } },
        error.status,
      );
    }
  });

  /**
   * Counts one pairing attempt against the account, then against the client address (an IPv6 client by its
   * /64). The account's limit comes first, so that an account already refused cannot use up the allowance of
   * the other accounts behind its address; past either, 429 `too_many_attempts` with its Retry-After.
   */
  async function countPairingAttempt(request: FastifyRequest, customer: Session): Promise<void> {
    await countAttempt(ctx, PAIRING_LIMITS.perAccount, String(customer.customerId));
    await countAttempt(ctx, PAIRING_LIMITS.perAddress, clientAddressKey(request.ip));
  }

  /**
   * A new barrier's time zone is the browser's (docs/design.md section 3.1), when the page's script could tell it
   * and it is one this runtime knows; else it stays UTC, and its page lets the owner choose.
   */
  async function zoneFromBrowser(body: unknown, customer: Session, deviceId: string): Promise<void> {
    const zone = textField(body, 'time_zone').slice(0, 64);
    if (!isTimeZone(zone)) return;
    await setBarrierTimeZone(ctx.db, { customerId: customer.customerId, deviceId, zone });
  }

  /** What the last form did, from the address it sent the browser to; a withdrawal names the company. */
  async function noticeOf(
    request: FastifyRequest,
    barrier: CustomerBarrier,
  ): Promise<Pick<BarrierPageProps, 'notice'>> {
    const household = householdNotice(request);
    if (household) return { notice: household };
    if (textField(request.query, 'renamed') === '1') return { notice: { kind: 'renamed' } };
    if (textField(request.query, 'replaced') === '1') return { notice: { kind: 'replaced' } };
    if (textField(request.query, 'limits') === '1') return { notice: { kind: 'limits' } };
    if (textField(request.query, 'zone') === '1') return { notice: { kind: 'zone' } };
    if (textField(request.query, 'notifications') === '1') return { notice: { kind: 'notifications' } };
    const withdrawn = textField(request.query, 'withdrawn');
    const shaped = textField(request.query, 'shaped');
    const keyRef = /^\d{1,9}$/.test(withdrawn) ? withdrawn : /^\d{1,9}$/.test(shaped) ? shaped : null;
    if (keyRef === null) return {};
    const key = await keyOnBarrier(ctx.db, {
      ownerId: barrier.ownerId,
      deviceId: barrier.id,
      keyRef: Number(keyRef),
      now: ctx.clock.now(),
    });
    if (!key) return {};
    if (keyRef === withdrawn)
      return key.revokedAt ? { notice: { kind: 'withdrawn', company: key.company.name } } : {};
    return key.revokedAt ? {} : { notice: { kind: 'shaped', company: key.company.name } };
  }

  async function showBarriers(
    request: FastifyRequest,
    reply: FastifyReply,
    customer: Session,
    form: PairingForm,
    status = 200,
    notice?: BarriersNotice,
  ): Promise<FastifyReply> {
    const barriers = await customerBarriers(ctx.db, customer.customerId);
    const counts = await companiesWithAccess(ctx.db, {
      deviceIds: barriers.map((barrier) => barrier.id),
      now: ctx.clock.now(),
    });
    const leftOpen = await leftOpenGates(ctx.db, customer.customerId, ctx.clock.now());
    const rows = barriers.map((barrier) => ({
      barrier,
      companies: counts.get(barrier.id) ?? 0,
      leftOpen: leftOpen.get(barrier.id) ?? [],
    }));
    return sendPage(
      reply,
      <BarriersPage page={pageContext(request, reply)} barriers={rows} form={form} notice={notice} />,
      status,
    );
  }

  async function showBarrier(
    request: FastifyRequest,
    reply: FastifyReply,
    customer: Session,
    deviceId: string,
    view: BarrierView,
    status = 200,
  ): Promise<FastifyReply> {
    const { gateForm, ...shown } = view;
    const barrier = await customerBarrier(ctx.db, customer.customerId, deviceId, 'look');
    const now = ctx.clock.now();
    // The household shares the owner's keys, journal and receipts (docs/design.md section 9.2).
    const owner = barrier.ownerId;
    const reader = { customerId: customer.customerId, deviceId: barrier.id };
    const [objects, keys, sensed, receipts, history, household, notificationChoice, questions, phone] =
      await Promise.all([
        barrierObjects(ctx.db, [barrier.id]),
        keysOnBarrier(ctx.db, { ownerId: owner, deviceId: barrier.id, now }),
        barrierGates(ctx.db, owner, barrier.id),
        receiptsStatus(ctx.db, { deviceId: barrier.id, customerId: owner }),
        accessHistory(ctx.db, { deviceId: barrier.id, customerId: owner }),
        barrier.role === 'owner' ? householdOf(ctx.db, { deviceId: barrier.id, now }) : undefined,
        choiceOf(ctx.db, reader),
        openQuestions(ctx.db, { deviceId: barrier.id, role: barrier.role, now }),
        phoneState(ctx.db, barrier.id),
      ]);
    // Only an offline phone's card says whether someone could be asked to call: no read for any other barrier.
    const callable = phone && !barrier.online ? await mayAskToCall(ctx.db, barrier.id) : false;
    const gates = { ...sensed, form: gateForm ?? savedLimitsForm(sensed.limits), now };
    const page = pageContext(request, reply);
    return sendPage(
      reply,
      <BarrierPage
        page={page}
        barrier={barrier}
        objects={objects.get(barrier.id) ?? []}
        keys={keys}
        history={history}
        gates={gates}
        receipts={receipts}
        notificationChoice={notificationChoice}
        questions={questions}
        phone={phone ? { ...phone, callable } : null}
        {...(household ? { household } : {})}
        {...shown}
      />,
      status,
    );
  }
}

/**
 * What the list says first, from the address a form sent the browser to: a barrier just added (by its id; the
 * page names it only when it is among the customer's own), or how many keys a removal ended.
 */
function barriersNotice(request: FastifyRequest): BarriersNotice | undefined {
  const added = textField(request.query, 'added');
  if (DEVICE_ID.test(added)) return { kind: 'added', barrierId: added };
  const removed = textField(request.query, 'removed');
  if (/^\d{1,6}$/.test(removed)) return { kind: 'removed', revokedKeys: Number(removed) };
  if (textField(request.query, 'left') === '1') return { kind: 'left' };
  return undefined;
}

const barrierName = formText(
  z
    .string()
    .trim()
    .check((context) => {
      const problem = barrierNameProblem(context.value);
      if (problem) context.issues.push({ code: 'custom', message: problem, input: context.value });
    }),
);

/** The pairing form: the code as a person types it (case, hyphens, look-alikes), and the barrier's name. */
const PAIRING_FORM = z.object({
  code: formText(
    z
      .string()
      .transform(normalizeCode)
      .refine((code) => isCode(code, PAIRING_CODE_LENGTH), {
        error: 'A pairing code has 8 letters and digits, such as ABCD-1234: check it against the controller.',
      }),
  ),
  name: barrierName,
});

const NAME_FORM = z.object({ name: barrierName });

/**
 * A whole number within its bounds, as a person types it (spaces around it forgiven); anything else is said in
 * the same sentence, naming the bounds.
 */
function wholeNumber(bounds: { min: number; max: number }, unit: string) {
  const message = `Enter a whole number of ${unit} from ${bounds.min} to ${bounds.max}.`;
  return formText(
    z
      .string()
      .trim()
      .regex(/^\d{1,5}$/, message)
      .transform(Number)
      .refine((value) => value >= bounds.min && value <= bounds.max, message),
  );
}

/** The gate alerts' form (docs/design.md section 10.4): minutes a gate may stay open, seconds to move. */
const LIMITS_FORM = z.object({
  left_open_minutes: wholeNumber(LEFT_OPEN_MINUTES, 'minutes'),
  move_timeout_seconds: wholeNumber(MOVE_TIMEOUT_SECONDS, 'seconds'),
});

/** The replacement form: the new controller's pairing code, typed like the pairing form's. */
const REPLACE_FORM = z.object({
  new_code: formText(
    z
      .string()
      .transform(normalizeCode)
      .refine((code) => isCode(code, PAIRING_CODE_LENGTH), {
        error:
          'A pairing code has 8 letters and digits, such as ABCD-1234: check it against the new controller.',
      }),
  ),
});
