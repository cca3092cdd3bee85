import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { listField, textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import { currentSecretId } from '../../rules/call-auth/secrets-list.js';
import { checkCallbackAddress, saveCallbackAddress } from '../../rules/companies/callback-address.js';
import type { Company } from '../../rules/companies/companies.js';
import { CHOOSABLE_KINDS, saveCallbackKinds } from '../../rules/events/callback-kinds.js';
import { type HeldEvents, heldEvents } from '../../rules/events/held-events.js';
import {
  expireRetiringSigningSecret,
  liveSigningSecrets,
  rotateSigningSecret,
} from '../../rules/events/signing-secrets.js';
import { CallbackPage, type KindsChoice, type SigningView } from './callback-page.js';
import { actorOf } from './company-access.js';
import type { CompanyAreaDeps } from './company-area-context.js';
import { type EventSide, onBothSides, type SideOf, sideVisit } from './event-side.js';

/** A rotation names the secret it replaces, so the same form sent twice makes nothing more. */
const SIGNING_FORM = z.object({ replaces: z.coerce.number().int().min(0).max(2_147_483_647) });
const SECRET_ID = z.coerce.number().int().positive().max(2_147_483_647);

/** The first address's answer about the events waiting (callback-page.tsx, HeldChoice). */
const HELD_FORM = z.object({
  held: z.enum(['send', 'drop']),
  held_up_to: z.string().regex(/^\d{1,19}$/),
});

/** The kinds form (callback-page.tsx, Kinds): every kind, or at least one of those listed. */
const KINDS_FORM = z
  .object({
    take: z.enum(['every', 'these'], { message: 'Choose every kind, or only the kinds ticked.' }),
    kinds: z
      .array(z.enum(CHOOSABLE_KINDS, { message: 'Choose among the kinds listed.' }))
      .max(CHOOSABLE_KINDS.length, { message: 'Choose among the kinds listed.' }),
  })
  .refine((form) => form.take === 'every' || form.kinds.length > 0, {
    path: ['kinds'],
    message: 'Tick at least one kind, or choose every kind.',
  });

/**
 * Setting and removing the callback address and its signing secrets (docs/design.md section 11.4); the owner
 * and developers may. A refused address is shown on the form with what is wrong, and the one saved before stays.
 * The same pages serve the company's sandbox under `/company/<id>/sandbox/callback` (section 11.9).
 */
export async function callbackRoutes(app: FastifyInstance, deps: CompanyAreaDeps): Promise<void> {
  await onBothSides(deps.ctx, (prefix, sideOf) => sideRoutes(app, deps, prefix, sideOf));
}

/** Where a side's pages are, and how the company's side is found (null: it has none yet, see the sandbox page). */
async function sideRoutes(
  app: FastifyInstance,
  deps: CompanyAreaDeps,
  prefix: string,
  sideOf: SideOf,
): Promise<void> {
  const { ctx } = deps;
  const addressRules = { resolve: ctx.resolveHost, allowPrivate: ctx.config.allowPrivateCallbacks };

  const visiting = (request: FastifyRequest, reply: FastifyReply) => sideVisit(deps, request, reply, sideOf);

  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    at: { company: Company; side: EventSide },
    extra: {
      notice?: string;
      value?: string;
      errors?: FieldErrors;
      heldChoice?: string;
      /** The events waiting, when the caller read them already. */
      held?: HeldEvents | null;
      signing?: Pick<SigningView, 'shown' | 'problem'>;
      kinds?: KindsChoice;
    } = {},
    status = 200,
  ) => {
    const { company, side } = at;
    const holder = side.holder;
    const secrets = await liveSigningSecrets(ctx, holder.id);
    const signing: SigningView = {
      secrets,
      replaces: currentSecretId(secrets),
      now: ctx.clock.now(),
      ...extra.signing,
    };
    return sendPage(
      reply,
      <CallbackPage
        page={pageContext(request, reply)}
        company={company}
        side={side}
        baseUrl={ctx.baseUrl()}
        {...extra}
        signing={signing}
        held={
          extra.held !== undefined
            ? extra.held
            : holder.callback_url
              ? null
              : await heldEvents(ctx, holder.id)
        }
      />,
      status,
    );
  };

  /** The side with its callback as just saved, for the page that answers the change. */
  const changed = (at: { company: Company; side: EventSide }, change: Partial<Company>) => ({
    company: at.company,
    side: { ...at.side, holder: { ...at.side.holder, ...change } },
  });

  app.get(`${prefix}/callback`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    return show(request, reply, at);
  });

  app.post(`${prefix}/callback`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const { visit } = at;
    const holder = at.side.holder;
    const value = textField(request.body, 'callback_url').trim();
    const choice = HELD_FORM.safeParse({
      held: textField(request.body, 'held') || undefined,
      held_up_to: textField(request.body, 'held_up_to') || undefined,
    });
    const held = holder.callback_url ? null : await heldEvents(ctx, holder.id);
    const heldChoice = choice.success ? choice.data.held : undefined;
    // Both problems at once, in the form's order: the address (checked here too when the question is
    // unanswered, since nothing will be saved), then the question.
    const unanswered = held !== null && !heldChoice;
    const checked = unanswered && value !== '' ? await checkCallbackAddress(value, addressRules) : null;
    const errors: FieldErrors = {};
    if (value === '') errors.callback_url = 'Enter the address, or remove it below.';
    else if (checked && !checked.ok) errors.callback_url = checked.problem;
    if (held && unanswered) {
      errors.held = `Choose whether to send the ${held.count === 1 ? 'event' : `${held.count} events`} waiting, or drop ${held.count === 1 ? 'it' : 'them'}.`;
    }
    if (Object.keys(errors).length > 0) {
      return show(request, reply, at, { value, errors, held, ...(heldChoice ? { heldChoice } : {}) }, 400);
    }
    // Only what the page showed is dropped: an event written since stays, and goes to the new address.
    const upTo = choice.success && choice.data.held === 'drop' ? choice.data.held_up_to : undefined;
    const saved = await onForm(reply, ['callback_refused'], () =>
      saveCallbackAddress(ctx, holder.id, value, {
        by: actorOf(visit),
        ...(upTo === undefined ? {} : { dropHeldUpTo: upTo }),
      }),
    );
    if (!saved.ok) {
      const kept = heldChoice ? { heldChoice } : {};
      return show(
        request,
        reply,
        at,
        { value, errors: { callback_url: saved.message }, held, ...kept },
        saved.status,
      );
    }
    const signing = saved.value.signingSecret ? { shown: saved.value.signingSecret } : {};
    const notice = !held
      ? 'Callback address saved.'
      : upTo !== undefined
        ? 'Callback address saved. The events that were waiting are dropped; events from now on go to it.'
        : 'Callback address saved. The events that were waiting go to it first, oldest first.';
    return show(request, reply, changed(at, { callback_url: saved.value.url }), { notice, signing });
  });

  /** The kinds the callback takes; the events waiting that it will not get are passed over (callback-kinds.ts). */
  app.post(`${prefix}/callback/kinds`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const posted = { take: textField(request.body, 'take'), kinds: listField(request.body, 'kinds') };
    const form = KINDS_FORM.safeParse(posted);
    if (!form.success) {
      const errors: FieldErrors = { kinds: form.error.issues[0]?.message ?? 'Choose the kinds again.' };
      const take = posted.take === 'every' ? 'every' : 'these';
      return show(request, reply, at, { errors, kinds: { take, kinds: posted.kinds } }, 400);
    }
    const kinds =
      form.data.take === 'every' ? null : CHOOSABLE_KINDS.filter((kind) => form.data.kinds.includes(kind));
    const passed = await saveCallbackKinds(ctx, at.side.holder.id, kinds, actorOf(at.visit));
    const notice =
      passed === 0
        ? 'The kinds are saved.'
        : `The kinds are saved. ${passed === 1 ? 'One event waiting was' : `${passed} events waiting were`} of a kind your callback no longer takes: ${passed === 1 ? 'it is' : 'they are'} not sent.`;
    return show(request, reply, changed(at, { callback_kinds: kinds }), { notice });
  });

  /** The new secret is shown on the answer to this POST only; the form names the secret it replaces. */
  app.post(`${prefix}/callback/signing-secret`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const form = SIGNING_FORM.safeParse({ replaces: textField(request.body, 'replaces') || undefined });
    const made = form.success
      ? await rotateSigningSecret(ctx, at.side.holder.id, form.data.replaces, actorOf(at.visit))
      : null;
    if (made === null) {
      const problem =
        'This form was sent before (a reload, perhaps): the secret it made was shown once and is not shown again. If you did not copy it, rotate again.';
      return show(request, reply, at, { signing: { problem } }, 409);
    }
    return show(request, reply, at, { signing: { shown: made } });
  });

  /** A replaced secret stops signing before its 24 hours are over (a leaked one). */
  app.post(`${prefix}/callback/signing-secret/:secretId/expire`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const secretId = SECRET_ID.safeParse((request.params as { secretId?: unknown }).secretId);
    if (
      !secretId.success ||
      !(await expireRetiringSigningSecret(ctx, at.side.holder.id, secretId.data, actorOf(at.visit)))
    ) {
      const problem = 'That secret no longer signs your events: the list below is up to date.';
      return show(request, reply, at, { signing: { problem } }, 409);
    }
    return show(request, reply, at, { notice: 'The old signing secret no longer signs your events.' });
  });

  app.post(`${prefix}/callback/remove`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    await saveCallbackAddress(ctx, at.side.holder.id, null, { by: actorOf(at.visit) });
    return show(request, reply, changed(at, { callback_url: null }), {
      notice: 'Callback address removed: events are no longer sent.',
    });
  });
}
