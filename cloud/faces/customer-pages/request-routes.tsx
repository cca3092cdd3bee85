import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { normalizeCode } from '../../../shared/codes.js';
import { ApiError } from '../../../shared/errors.js';
import { type AttemptLimit, limitPerAddress } from '../../foundation/web/attempt-limit.js';
import { type FieldErrors, formText, parseForm, textField } from '../../foundation/web/form-input.js';
import { sendPage } from '../../foundation/web/page.js';
import type { Session } from '../../foundation/web/sessions.js';
import { pageContext, signedIn } from '../../foundation/web/web-deps.js';
import { issueAccessKey } from '../../rules/access-keys/access-keys.js';
import { endOfDay, todayIn } from '../../rules/access-keys/key-lifetime.js';
import { keyOfRequest } from '../../rules/access-keys/keys-on-barrier.js';
import { barrierObjects, customerBarriers } from '../../rules/devices/customer-barriers.js';
import { widerParts } from '../../rules/grant-shapes/narrowing.js';
import { proposalOf } from '../../rules/grant-shapes/proposals.js';
import { shapeWords } from '../../rules/grant-shapes/shape-words.js';
import { roleAllows } from '../../rules/households/barrier-roles.js';
import { type Companion, householdCompanions } from '../../rules/households/companions.js';
import { claimRequest } from '../../rules/requests/claim.js';
import { declineRequest } from '../../rules/requests/decline.js';
import { handOverRequest } from '../../rules/requests/handover.js';
import { releaseRequest } from '../../rules/requests/release.js';
import { type RequestView, requestView } from '../../rules/requests/request-view.js';
import type { ConsentChoices } from './consent-page.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';
import { RequestPage } from './request-page.js';
import { choicesOf, type FormShape, readShapeForm, WINDOW_ROWS } from './shape-form.js';

/**
 * `/c/<code>` and its forms (docs/design.md section 10.3): the page (a GET, which never changes state),
 * Continue (claims a new request), Grant (issues the key), Decline (ends the request), Release (lets a claim
 * made with the wrong account go) and Pass it on (to someone of the household, section 9.2). Every route here looks
 * a code up, so all of them count in one limit per client address, in the database, so that it holds across
 * instances: a request code is a bearer secret, and 30 lookups a minute is far more than a person scanning a QR
 * code needs and far too few to guess one of 2^60.
 */
export const CODE_LOOKUPS: AttemptLimit = {
  bucket: 'request-code-lookups',
  max: 30,
  windowMs: 60_000,
  message: (wait) => `Too many attempts from here; wait ${wait} and try again.`,
};

export async function requestRoutes(app: FastifyInstance, deps: CustomerPagesDeps): Promise<void> {
  const { ctx } = deps;
  const lookups = limitPerAddress(ctx, CODE_LOOKUPS);

  // The form on the "no such code" page: a code as typed, read as the code it means.
  app.get('/c', async (request, reply) => {
    const typed = normalizeCode(textField(request.query, 'code')) || '-';
    return reply.redirect(`/c/${encodeURIComponent(typed)}`, 303);
  });

  app.get('/c/:code', { onRequest: lookups }, async (request, reply) => {
    const view = await viewOf(request);
    return showRequest(request, reply, view, {
      justGranted: textField(request.query, 'granted') === '1',
      justReleased: textField(request.query, 'released') === '1',
    });
  });

  app.post('/c/:code/claim', { onRequest: lookups }, async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const view = await viewOf(request);
    if (view.kind !== 'found') return showRequest(request, reply, view);
    try {
      await claimRequest(ctx, { code: view.code, customerId: customer.customerId });
    } catch (error) {
      // Taken by another account or lapsed meanwhile: the page says which.
      if (!(error instanceof ApiError && error.code === 'invalid_state')) throw error;
    }
    return reply.redirect(`/c/${view.code}`, 303);
  });

  // Only the customer holding the claim declines; anyone else, or a request past `claimed`, gets the page for
  // its state and nothing changes, as with Grant.
  app.post('/c/:code/decline', { onRequest: lookups }, async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const view = await viewOf(request);
    if (view.kind !== 'found') return showRequest(request, reply, view);
    if (view.state !== 'claimed' || view.holder !== 'you') return reply.redirect(`/c/${view.code}`, 303);
    try {
      await declineRequest(ctx, { code: view.code, customerId: customer.customerId });
    } catch (error) {
      // Granted or lapsed meanwhile: the page says which.
      if (!(error instanceof ApiError && error.code === 'invalid_state')) throw error;
    }
    return reply.redirect(`/c/${view.code}`, 303);
  });

  // Only the customer holding the claim releases it, as with Decline; the request is `new` again.
  app.post('/c/:code/release', { onRequest: lookups }, async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const view = await viewOf(request);
    if (view.kind !== 'found') return showRequest(request, reply, view);
    if (view.state !== 'claimed' || view.holder !== 'you') return reply.redirect(`/c/${view.code}`, 303);
    try {
      await releaseRequest(ctx, { code: view.code, customerId: customer.customerId });
    } catch (error) {
      // Granted, declined or lapsed meanwhile: the page says which.
      if (!(error instanceof ApiError && error.code === 'invalid_state')) throw error;
      return reply.redirect(`/c/${view.code}`, 303);
    }
    return reply.redirect(`/c/${view.code}?released=1`, 303);
  });

  // Only the customer holding the claim passes it on, to someone they share a barrier with; the new holder
  // is e-mailed a link, and a failed e-mail is said rather than undoing the hand-over.
  app.post('/c/:code/hand-over', { onRequest: lookups }, async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const view = await viewOf(request);
    if (view.kind !== 'found') return showRequest(request, reply, view);
    if (view.state !== 'claimed' || view.holder !== 'you') return reply.redirect(`/c/${view.code}`, 303);
    const to = textField(request.body, 'to');
    const toCustomerId = /^\d{1,9}$/.test(to) ? Number(to) : 0;
    let companion: Companion;
    try {
      companion = await handOverRequest(ctx, {
        code: view.code,
        customerId: customer.customerId,
        toCustomerId,
      });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.code === 'invalid_state') return reply.redirect(`/c/${view.code}`, 303);
      const errors = { to: error.message };
      return showRequest(request, reply, view, { status: 400, handoverErrors: errors });
    }
    await tellNewHolder({
      to: companion,
      by: customer.displayName,
      company: view.company.name,
      code: view.code,
    });
    return reply.redirect(`/c/${view.code}`, 303);
  });

  app.post('/c/:code/grant', { onRequest: lookups }, async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const view = await viewOf(request);
    if (view.kind !== 'found') return showRequest(request, reply, view);
    if (view.state !== 'claimed' || view.holder !== 'you') return reply.redirect(`/c/${view.code}`, 303);
    // "Add another window" comes back with one more row, and grants nothing.
    if (textField(request.body, 'more_windows')) {
      const posted = await postedChoices(request.body, customer, view);
      return showRequest(request, reply, view, { posted });
    }
    const grant = await checkGrant(request.body, customer, view);
    if (!grant.ok) return showRequest(request, reply, view, { status: 400, posted: grant.posted });
    try {
      await issueAccessKey(ctx, {
        code: view.code,
        customerId: customer.customerId,
        deviceId: grant.deviceId,
        objectIds: grant.objectIds,
        keyExpiresAt: grant.keyExpiresAt,
        shape: grant.shape,
        askFirstS: grant.shape.askFirstS,
      });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.code === 'invalid_state') return reply.redirect(`/c/${view.code}`, 303);
      const field =
        error.field === 'key_expires_at' ? 'until' : error.field === 'starts_at' ? 'start' : 'objects';
      const posted = { ...grant.posted, errors: { [field]: error.message } };
      return showRequest(request, reply, view, { status: 400, posted });
    }
    return reply.redirect(`/c/${view.code}?granted=1`, 303);
  });

  function viewOf(request: FastifyRequest): Promise<RequestView> {
    const { code } = request.params as { code: string };
    return requestView(ctx.db, {
      typed: code,
      customerId: request.customer?.customerId ?? null,
      now: ctx.clock.now(),
    });
  }

  type Posted = Pick<
    ConsentChoices,
    'objects' | 'lifetime' | 'until' | 'shape' | 'wider' | 'widerOk' | 'errors'
  >;

  /** The page for what the code names, with what the customer holding it needs to answer or to review. */
  async function showRequest(
    request: FastifyRequest,
    reply: FastifyReply,
    view: RequestView,
    options: {
      status?: number;
      posted?: Posted;
      justGranted?: boolean;
      justReleased?: boolean;
      handoverErrors?: FieldErrors;
    } = {},
  ): Promise<FastifyReply> {
    const page = pageContext(request, reply);
    const customerId = request.customer?.customerId;
    if (view.kind !== 'found' || customerId === undefined || view.holder !== 'you') {
      // Just released: said only while the request is still waiting, not after someone took it meanwhile.
      const justReleased = options.justReleased === true && view.kind === 'found' && view.state === 'new';
      const passedTo =
        view.kind === 'found' && view.state === 'claimed' && view.request.handed_by === customerId
          ? await displayName(view.request.customer_id)
          : undefined;
      return sendPage(
        reply,
        <RequestPage
          page={page}
          view={view}
          justReleased={justReleased}
          {...(passedTo ? { passedTo } : {})}
        />,
        view.kind === 'found' ? 200 : 404,
      );
    }
    const now = ctx.clock.now();
    if (view.state === 'claimed') {
      const barriers = await barriersWithObjects(customerId);
      const proposal = proposalOf(view.request.proposed_shape);
      const zone = zoneOf(barriers, options.posted?.objects ?? []);
      const consent: ConsentChoices = {
        barriers,
        ...(barriers.length === 0 ? { lookOnly: await lookOnlyOwners(customerId) } : {}),
        objects: [],
        lifetime: proposal?.endsAt ? 'proposed' : 'withdrawn',
        until: '',
        today: todayIn(now, zone),
        shape: choicesOf(proposal, zone),
        zone,
        proposal: proposal && {
          words: shapeWords(proposal, zone, { withZone: true }),
          endsAt: proposal.endsAt,
        },
        ...options.posted,
      };
      const companions = await householdCompanions(ctx.db, customerId);
      const handedBy = await displayName(view.request.handed_by);
      return sendPage(
        reply,
        <RequestPage
          page={page}
          view={view}
          consent={consent}
          handover={{ companions, ...(options.handoverErrors ? { errors: options.handoverErrors } : {}) }}
          {...(handedBy ? { handedBy } : {})}
        />,
        options.status ?? 200,
      );
    }
    const granted = await keyOfRequest(ctx.db, { customerId, requestId: view.request.id, now });
    return sendPage(
      reply,
      <RequestPage
        page={page}
        view={view}
        {...(granted ? { granted } : {})}
        justGranted={options.justGranted === true && view.state === 'issued'}
      />,
    );
  }

  async function displayName(customerId: number | null): Promise<string | undefined> {
    if (customerId === null) return undefined;
    const row = await ctx.db
      .selectFrom('customers')
      .select('display_name')
      .where('id', '=', customerId)
      .executeTakeFirst();
    return row?.display_name;
  }

  /** The e-mail to whom a request was passed; a failure is logged, as the request is theirs either way. */
  async function tellNewHolder(input: { to: Companion; by: string; company: string; code: string }) {
    if (!input.to.email) return;
    try {
      await ctx.mailer.sendNotice({
        to: input.to.email,
        subject: `${input.by} asks you to answer ${input.company}'s request`,
        text: [
          `${input.by} passed you ${input.company}'s request to open a gate you share on Gatelink.`,
          '',
          `Answer it at ${ctx.baseUrl()}/c/${input.code} : grant access on a barrier, or decline.`,
          'It lapses when the company set it to; nothing is shared until you grant.',
        ].join('\n'),
      });
    } catch (error) {
      ctx.log.warn({ err: error, email: input.to.email }, 'the request passed on could not be e-mailed');
    }
  }

  /** The barriers the customer may grant on: their own and those shared with them to grant (section 9.2). */
  async function barriersWithObjects(customerId: number): Promise<ConsentChoices['barriers']> {
    const barriers = (await customerBarriers(ctx.db, customerId)).filter((barrier) =>
      roleAllows(barrier.role, 'grant'),
    );
    const objects = await barrierObjects(
      ctx.db,
      barriers.map((barrier) => barrier.id),
    );
    return barriers.map((barrier) => ({ barrier, objects: objects.get(barrier.id) ?? [] }));
  }

  /** Who shares barriers with the customer to look only: the consent form says why it offers none of them. */
  async function lookOnlyOwners(customerId: number): Promise<string[]> {
    const barriers = await customerBarriers(ctx.db, customerId);
    const owners = barriers.flatMap((barrier) =>
      barrier.sharedBy !== null && !roleAllows(barrier.role, 'grant') ? [barrier.sharedBy] : [],
    );
    return [...new Set(owners)];
  }

  /**
   * The consent form, checked: the objects ticked must all be on one of the customer's own barriers (that
   * barrier is the key's), a dated key needs a day from today on, the shape's answers must make sense in the
   * barrier's zone, and a grant wider than the company's proposal needs the customer's "yes" (docs/design.md
   * section 10.3). issueAccessKey checks the barrier and objects again in its transaction; this says what is
   * wrong in the customer's words first.
   */
  async function checkGrant(
    body: unknown,
    customer: Session,
    view: Extract<RequestView, { kind: 'found' }>,
  ): Promise<
    | {
        ok: true;
        deviceId: string;
        objectIds: number[];
        keyExpiresAt: Date | null;
        shape: FormShape;
        posted: Posted;
      }
    | { ok: false; posted: Posted }
  > {
    const companyName = view.company.name;
    const now = ctx.clock.now();
    const barriers = await barriersWithObjects(customer.customerId);
    const parsed = parseForm(GRANT_FORM, body);
    const objectIds = parsed.ok ? parsed.value.object : [];
    const zone = zoneOf(barriers, objectIds);
    const shape = readShapeForm(body, zone, now);
    const widerOk = textField(body, 'wider_ok') === '1';
    const lifetime = textField(body, 'lifetime');
    const posted: Posted = {
      objects: objectIds,
      lifetime: lifetime === 'date' || lifetime === 'proposed' ? lifetime : 'withdrawn',
      until: parsed.ok ? parsed.value.until : textField(body, 'until').slice(0, 20),
      shape: shape.choices,
      widerOk,
    };
    const errors: FieldErrors = shape.ok ? {} : { ...shape.errors };
    if (!parsed.ok) {
      for (const [field, message] of Object.entries(parsed.errors)) {
        errors[field === 'object' ? 'objects' : field] = message;
      }
      return { ok: false, posted: { ...posted, errors } };
    }
    const form = parsed.value;
    const owner = new Map(
      barriers.flatMap(({ barrier, objects }) => objects.map((object) => [object.numberId, barrier.id])),
    );
    const chosen = new Set(form.object.map((id) => owner.get(id)));
    if (form.object.length === 0) {
      errors.objects = `Tick at least one thing ${companyName} may open.`;
    } else if (chosen.has(undefined)) {
      errors.objects = 'Tick only what is on your own barriers.';
    } else if (chosen.size > 1) {
      errors.objects =
        'Access covers one barrier: tick objects of one barrier only. For another barrier, ask the company for a second code.';
    }
    const proposal = proposalOf(view.request.proposed_shape);
    let keyExpiresAt: Date | null = null;
    if (form.lifetime === 'proposed') {
      if (proposal?.endsAt && proposal.endsAt > now) keyExpiresAt = proposal.endsAt;
      else errors.lifetime = 'Choose how long access lasts.';
    } else if (form.lifetime === 'date') {
      const end = form.until ? endOfDay(form.until, now, zone) : null;
      if (!end) errors.until = 'Choose the last day of access.';
      else if (!end.ok) errors.until = end.problem;
      else keyExpiresAt = end.expiresAt;
    }
    const [deviceId] = [...chosen];
    if (Object.keys(errors).length > 0 || deviceId === undefined || !shape.ok)
      return { ok: false, posted: { ...posted, errors } };
    // "From now" starts now: wider than a proposal only while its start is still to come.
    const granted = { ...shape.shape, startsAt: shape.shape.startsAt ?? now, endsAt: keyExpiresAt };
    const wider = proposal ? widerParts(granted, proposal) : [];
    if (wider.length > 0 && !widerOk) {
      const message = `This gives ${companyName} more than they asked for: tick that you mean it, or give less.`;
      return { ok: false, posted: { ...posted, wider, errors: { wider: message } } };
    }
    return { ok: true, deviceId, objectIds: form.object, keyExpiresAt, shape: shape.shape, posted };
  }

  /** The form as posted, kept as it is, for "Add another window". */
  async function postedChoices(
    body: unknown,
    customer: Session,
    view: Extract<RequestView, { kind: 'found' }>,
  ): Promise<Posted> {
    const checked = await checkGrant(body, customer, view);
    const { errors: _errors, wider: _wider, ...posted } = checked.posted;
    if (posted.shape.windows.length < WINDOW_ROWS.most)
      posted.shape.windows.push({ days: [], from: '', to: '' });
    return { ...posted, shape: { ...posted.shape, hours: 'windows' } };
  }
}

/**
 * The zone the shape's times are in: the barrier of the ticked objects, else the customer's first barrier (most
 * have one, and every barrier of a household is usually in one zone), else UTC.
 */
function zoneOf(barriers: ConsentChoices['barriers'], objectIds: readonly number[]): string {
  const ticked = barriers.find(({ objects }) =>
    objects.some((object) => objectIds.includes(object.numberId)),
  );
  return (ticked ?? barriers[0])?.barrier.timeZone ?? 'UTC';
}

/**
 * The consent form's fields as posted: `object` once per ticked box, `lifetime`, and `until` for a date; the
 * shape's own fields are read by ./shape-form.ts.
 */
const GRANT_FORM = z.object({
  object: z.preprocess(
    (value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]),
    z.array(
      z
        .string()
        .regex(/^\d{1,9}$/, { error: 'Tick what they may open from the list.' })
        .transform(Number),
    ),
  ),
  lifetime: formText(z.enum(['withdrawn', 'date', 'proposed'], { error: 'Choose how long access lasts.' })),
  until: formText(z.string().max(20, { error: 'Give the last day as a date, such as 2026-11-30.' })),
});
