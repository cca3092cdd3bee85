import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { listField, textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import { currentSecretId } from '../../rules/call-auth/secrets-list.js';
import { checkCallbackAddress } from '../../rules/companies/callback-address.js';
import type { Company } from '../../rules/companies/companies.js';
import { CHOOSABLE_KINDS, saveCallbackKinds } from '../../rules/events/callback-kinds.js';
import { type EndpointState, endpointStates } from '../../rules/events/delivery-log.js';
import {
  addEndpoint,
  changeEndpointAddress,
  type Endpoint,
  findEndpoint,
  MAX_ENDPOINTS,
  removeEndpoint,
} from '../../rules/events/endpoints.js';
import { type HeldEvents, heldEvents } from '../../rules/events/held-events.js';
import {
  expireRetiringSigningSecret,
  liveSigningSecrets,
  rotateSigningSecret,
} from '../../rules/events/signing-secrets.js';
import { CallbackPage } from './callback-page.js';
import { actorOf, noSuchCompanyPage } from './company-access.js';
import type { CompanyAreaDeps } from './company-area-context.js';
import { EndpointPage, type KindsChoice, type SigningView } from './endpoint-page.js';
import { ENDPOINT_ID } from './endpoint-state.js';
import { type EventSide, onBothSides, type SideOf, type SideVisit, sideVisit } from './event-side.js';

/** A rotation names the secret it replaces, so the same form sent twice makes nothing more. */
const SIGNING_FORM = z.object({ replaces: z.coerce.number().int().min(0).max(2_147_483_647) });
const SECRET_ID = z.coerce.number().int().positive().max(2_147_483_647);

/** The first endpoint's answer about the events waiting (callback-page.tsx, HeldChoice). */
const HELD_FORM = z.object({
  held: z.enum(['send', 'drop']),
  held_up_to: z.string().regex(/^\d{1,19}$/),
});

/** The kinds form (endpoint-page.tsx, Kinds): every kind, or at least one of those listed. */
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
 * A company's endpoints, their addresses, kinds and signing secrets (docs/design.md sections 6.2 and 11.4); the
 * owner and developers change them, viewers read them (company-access.ts refuses their forms). A refused
 * address is shown on the form with what is wrong, and what was saved before stays. An endpoint id that is not
 * the side's (another company's, the other side's, removed, or no id at all) answers the area's 404, as a
 * company that is not the member's does. The same pages serve the company's sandbox under
 * `/company/<id>/sandbox/callback` (section 11.9).
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

  /** The side's endpoint the path names, after the visit (so a viewer's form is refused 403 first); or the 404. */
  const endpointOf = async (request: FastifyRequest, at: SideVisit): Promise<Endpoint> => {
    const id = ENDPOINT_ID.safeParse((request.params as { endpointId?: unknown }).endpointId);
    const endpoint = id.success ? await findEndpoint(ctx.db, at.side.holder.id, id.data) : null;
    if (!endpoint) throw noSuchCompanyPage();
    return endpoint;
  };

  const showList = async (
    request: FastifyRequest,
    reply: FastifyReply,
    at: { company: Company; side: EventSide },
    extra: {
      notice?: string;
      value?: string;
      errors?: FieldErrors;
      problem?: string;
      heldChoice?: string;
      /** The endpoints and the events waiting, when the caller read them already. */
      endpoints?: EndpointState[];
      held?: HeldEvents | null;
    } = {},
    status = 200,
  ) => {
    const holderId = at.side.holder.id;
    const endpoints = extra.endpoints ?? (await endpointStates(ctx, holderId));
    // Only a company with no endpoint is asked about the events held meanwhile (held-events.ts).
    const held =
      extra.held !== undefined ? extra.held : endpoints.length === 0 ? await heldEvents(ctx, holderId) : null;
    return sendPage(
      reply,
      <CallbackPage
        page={pageContext(request, reply)}
        company={at.company}
        side={at.side}
        baseUrl={ctx.baseUrl()}
        {...extra}
        endpoints={endpoints}
        held={held}
      />,
      status,
    );
  };

  const showEndpoint = async (
    request: FastifyRequest,
    reply: FastifyReply,
    at: { company: Company; side: EventSide },
    endpointId: number,
    extra: {
      notice?: string;
      value?: string;
      errors?: FieldErrors;
      signing?: Pick<SigningView, 'shown' | 'problem'>;
      kinds?: KindsChoice;
    } = {},
    status = 200,
  ) => {
    const [states, secrets] = await Promise.all([
      endpointStates(ctx, at.side.holder.id),
      liveSigningSecrets(ctx, endpointId),
    ]);
    const endpoint = states.find((state) => state.id === endpointId);
    // Removed by another member since this request found it: the page it answers is gone.
    if (!endpoint) throw noSuchCompanyPage();
    const signing: SigningView = {
      secrets,
      replaces: currentSecretId(secrets),
      now: ctx.clock.now(),
      ...extra.signing,
    };
    return sendPage(
      reply,
      <EndpointPage
        page={pageContext(request, reply)}
        company={at.company}
        side={at.side}
        endpoint={endpoint}
        {...extra}
        signing={signing}
      />,
      status,
    );
  };

  app.get(`${prefix}/callback`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    return showList(request, reply, at);
  });

  /** Adds an endpoint; the answer is its page, with its first signing secret shown this once. */
  app.post(`${prefix}/callback`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const holderId = at.side.holder.id;
    const value = textField(request.body, 'callback_url').trim();
    const choice = HELD_FORM.safeParse({
      held: textField(request.body, 'held') || undefined,
      held_up_to: textField(request.body, 'held_up_to') || undefined,
    });
    const endpoints = await endpointStates(ctx, holderId);
    const held = endpoints.length === 0 ? await heldEvents(ctx, holderId) : null;
    const heldChoice = choice.success ? choice.data.held : undefined;
    const kept = { value, endpoints, held, ...(heldChoice ? { heldChoice } : {}) };
    // A form from before the last endpoint was added: the page it answers has no form, only why.
    if (endpoints.length >= MAX_ENDPOINTS) {
      const { message } = new ApiError('too_many_endpoints');
      return showList(request, reply, at, { ...kept, problem: message }, 409);
    }
    // Both problems at once, in the form's order: the address (checked here too when the question is
    // unanswered, since nothing will be saved), then the question.
    const unanswered = held !== null && !heldChoice;
    const checked = unanswered && value !== '' ? await checkCallbackAddress(value, addressRules) : null;
    const errors: FieldErrors = {};
    if (value === '') errors.callback_url = 'Enter the address of the endpoint.';
    else if (checked && !checked.ok) errors.callback_url = checked.problem;
    if (held && unanswered) {
      errors.held = `Choose whether to send the ${held.count === 1 ? 'event' : `${held.count} events`} waiting, or drop ${held.count === 1 ? 'it' : 'them'}.`;
    }
    if (Object.keys(errors).length > 0) return showList(request, reply, at, { ...kept, errors }, 400);
    // Only what the page showed is dropped: an event written since stays, and goes to the new endpoint.
    const upTo = held && choice.success && choice.data.held === 'drop' ? choice.data.held_up_to : undefined;
    // A second post of the same form (a reload of its answer, a double click) is refused as `endpoint_exists`,
    // on the address: one endpoint, one secret shown.
    const added = await onForm(reply, ['callback_refused', 'too_many_endpoints', 'endpoint_exists'], () =>
      addEndpoint(ctx, holderId, value, {
        by: actorOf(at.visit),
        ...(upTo === undefined ? {} : { dropHeldUpTo: upTo }),
      }),
    );
    if (!added.ok) {
      // Too many is no fault of the address (another member's endpoint came first): the list, read again, says why.
      if (added.code === 'too_many_endpoints') {
        return showList(request, reply, at, { problem: added.message }, added.status);
      }
      const errors = { callback_url: added.message };
      return showList(request, reply, at, { ...kept, errors }, added.status);
    }
    const notice = !held
      ? 'Endpoint added.'
      : upTo !== undefined
        ? 'Endpoint added. The events that were waiting are dropped; events from now on go to it.'
        : 'Endpoint added. The events that were waiting go to it first, oldest first.';
    return showEndpoint(request, reply, at, added.value.endpoint.id, {
      notice,
      signing: { shown: added.value.signingSecret },
    });
  });

  app.get(`${prefix}/callback/:endpointId`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const endpoint = await endpointOf(request, at);
    return showEndpoint(request, reply, at, endpoint.id);
  });

  /** A new address for the endpoint, checked as a new one; its kinds, secrets and events stay. */
  app.post(`${prefix}/callback/:endpointId`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const endpoint = await endpointOf(request, at);
    const value = textField(request.body, 'callback_url').trim();
    if (value === '') {
      const errors = { callback_url: 'Enter the address, or remove the endpoint below.' };
      return showEndpoint(request, reply, at, endpoint.id, { value, errors }, 400);
    }
    const saved = await onForm(reply, ['callback_refused', 'endpoint_exists'], () =>
      changeEndpointAddress(ctx, at.side.holder.id, endpoint.id, value, actorOf(at.visit)),
    );
    if (!saved.ok) {
      const errors = { callback_url: saved.message };
      return showEndpoint(request, reply, at, endpoint.id, { value, errors }, saved.status);
    }
    if (saved.value === null) throw noSuchCompanyPage();
    return showEndpoint(request, reply, at, endpoint.id, { notice: 'Address saved.' });
  });

  /** The kinds the endpoint takes; the events waiting that it will not get are passed over (callback-kinds.ts). */
  app.post(`${prefix}/callback/:endpointId/kinds`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const endpoint = await endpointOf(request, at);
    const posted = { take: textField(request.body, 'take'), kinds: listField(request.body, 'kinds') };
    const form = KINDS_FORM.safeParse(posted);
    if (!form.success) {
      const errors: FieldErrors = { kinds: form.error.issues[0]?.message ?? 'Choose the kinds again.' };
      const take = posted.take === 'every' ? 'every' : 'these';
      return showEndpoint(
        request,
        reply,
        at,
        endpoint.id,
        { errors, kinds: { take, kinds: posted.kinds } },
        400,
      );
    }
    const kinds =
      form.data.take === 'every' ? null : CHOOSABLE_KINDS.filter((kind) => form.data.kinds.includes(kind));
    const passed = await saveCallbackKinds(
      ctx,
      { companyId: at.side.holder.id, endpointId: endpoint.id },
      kinds,
      actorOf(at.visit),
    );
    if (passed === null) throw noSuchCompanyPage();
    const notice =
      passed === 0
        ? 'The kinds are saved.'
        : `The kinds are saved. ${passed === 1 ? 'One event waiting was' : `${passed} events waiting were`} of a kind this endpoint no longer takes: ${passed === 1 ? 'it is' : 'they are'} not sent to it.`;
    return showEndpoint(request, reply, at, endpoint.id, { notice });
  });

  /** The new secret is shown on the answer to this POST only; the form names the secret it replaces. */
  app.post(`${prefix}/callback/:endpointId/signing-secret`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const endpoint = await endpointOf(request, at);
    const form = SIGNING_FORM.safeParse({ replaces: textField(request.body, 'replaces') || undefined });
    const made = form.success
      ? await rotateSigningSecret(
          ctx,
          { companyId: at.side.holder.id, endpointId: endpoint.id, url: endpoint.url },
          form.data.replaces,
          actorOf(at.visit),
        )
      : null;
    if (made === null) {
      const problem =
        'This form was sent before (a reload, perhaps): the secret it made was shown once and is not shown again. If you did not copy it, rotate again.';
      return showEndpoint(request, reply, at, endpoint.id, { signing: { problem } }, 409);
    }
    return showEndpoint(request, reply, at, endpoint.id, { signing: { shown: made } });
  });

  /** A replaced secret stops signing before its 24 hours are over (a leaked one). */
  app.post(`${prefix}/callback/:endpointId/signing-secret/:secretId/expire`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const endpoint = await endpointOf(request, at);
    const secretId = SECRET_ID.safeParse((request.params as { secretId?: unknown }).secretId);
    const expired =
      secretId.success &&
      (await expireRetiringSigningSecret(
        ctx,
        { companyId: at.side.holder.id, endpointId: endpoint.id, url: endpoint.url },
        secretId.data,
        actorOf(at.visit),
      ));
    if (!expired) {
      const problem = 'That secret no longer signs this endpoint’s events: the list below is up to date.';
      return showEndpoint(request, reply, at, endpoint.id, { signing: { problem } }, 409);
    }
    return showEndpoint(request, reply, at, endpoint.id, {
      notice: 'The old signing secret no longer signs this endpoint’s events.',
    });
  });

  app.post(`${prefix}/callback/:endpointId/remove`, async (request, reply) => {
    const at = await visiting(request, reply);
    if (!at) return reply;
    const endpoint = await endpointOf(request, at);
    const removed = await removeEndpoint(ctx, at.side.holder.id, endpoint.id, actorOf(at.visit));
    if (removed === null) throw noSuchCompanyPage();
    return showList(request, reply, at, {
      notice: `Endpoint removed: events are no longer sent to ${removed}.`,
    });
  });
}
