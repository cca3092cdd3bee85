import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../shared/errors.js';
import { type FieldErrors, textField } from '../../foundation/web/form-input.js';
import { sendPage } from '../../foundation/web/page.js';
import type { Session } from '../../foundation/web/sessions.js';
import { pageContext, signedIn } from '../../foundation/web/web-deps.js';
import { endOfDay, lastDayOf, todayIn } from '../../rules/access-keys/key-lifetime.js';
import { type KeyOnBarrier, keyOnBarrier } from '../../rules/access-keys/keys-on-barrier.js';
import { reshapeAccessKey } from '../../rules/access-keys/reshape.js';
import { customerBarrier } from '../../rules/devices/customer-barriers.js';
import { widerParts } from '../../rules/grant-shapes/narrowing.js';
import { keyProposal } from '../../rules/grant-shapes/proposals.js';
import { shapeWords } from '../../rules/grant-shapes/shape-words.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';
import { type KeyShapeForm, KeyShapePage } from './key-shape-page.js';
import { choicesOf, readShapeForm, WINDOW_ROWS } from './shape-form.js';

/**
 * A key's shape, changed by the barrier's owner or a member who may grant (docs/design.md sections 9.2 and
 * 10.4): the form starts from the key as it is; saving takes effect for the next `open`. Another customer's barrier or key, a withdrawn key, and a path
 * that cannot name one all answer 404 and change nothing, as every barrier route does.
 */
export async function keyShapeRoutes(app: FastifyInstance, deps: CustomerPagesDeps): Promise<void> {
  const { ctx } = deps;

  app.get('/barriers/:id/keys/:keyRef/shape', async (request, reply) => {
    const customer = signedIn(request, reply);
    if (!customer) return reply;
    const found = await keyOf(request, customer);
    const { access } = found;
    const lastDay = access.expiresAt ? lastDayOf(access.expiresAt, access.timeZone) : null;
    return show(request, reply, customer, found, {
      shape: choicesOf(access.shape, access.timeZone, access.askFirstS),
      lifetime: access.expiresAt ? 'keep' : 'withdrawn',
      until: lastDay ? lastDay.toISOString().slice(0, 10) : '',
      today: todayIn(ctx.clock.now(), access.timeZone),
    });
  });

  app.post('/barriers/:id/keys/:keyRef/shape', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const found = await keyOf(request, customer);
    const { barrierId, access } = found;
    const now = ctx.clock.now();
    const shape = readShapeForm(request.body, access.timeZone, now);
    const lifetime = lifetimeOf(request.body, access);
    const form: KeyShapeForm = {
      shape: shape.choices,
      lifetime,
      until: textField(request.body, 'until').slice(0, 20),
      today: todayIn(now, access.timeZone),
    };
    if (textField(request.body, 'more_windows')) {
      if (form.shape.windows.length < WINDOW_ROWS.most)
        form.shape.windows.push({ days: [], from: '', to: '' });
      return show(request, reply, customer, found, { ...form, shape: { ...form.shape, hours: 'windows' } });
    }
    const errors: FieldErrors = shape.ok ? {} : { ...shape.errors };
    const end = readEnd(form, access, now, errors);
    if (!shape.ok || end === undefined)
      return show(request, reply, customer, found, { ...form, errors }, 400);
    const proposal = await keyProposal(ctx.db, access.keyRef);
    const endsAt = end.keep ? access.expiresAt : end.at;
    // "From now" starts now: wider than a proposal only while its start is still to come.
    const granted = { ...shape.shape, startsAt: shape.shape.startsAt ?? now, endsAt };
    const wider = proposal ? widerParts(granted, proposal) : [];
    if (wider.length > 0 && textField(request.body, 'wider_ok') !== '1') {
      const message = `This gives ${access.company.name} more than they asked for: tick that you mean it, or give less.`;
      return show(request, reply, customer, found, { ...form, wider, errors: { wider: message } }, 400);
    }
    try {
      await reshapeAccessKey(ctx, {
        customerId: customer.customerId,
        deviceId: barrierId,
        keyRef: access.keyRef,
        shape: shape.shape,
        askFirstS: shape.shape.askFirstS,
        end,
      });
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'invalid_field') throw error;
      const field = error.field === 'starts_at' ? 'start' : 'until';
      return show(request, reply, customer, found, { ...form, errors: { [field]: error.message } }, 400);
    }
    return reply.redirect(`/barriers/${barrierId}?shaped=${access.keyRef}`, 303);
  });

  /** The barrier and the key of the path, the signed-in customer's and not withdrawn, or 404. */
  async function keyOf(
    request: FastifyRequest,
    customer: Session,
  ): Promise<{ barrierId: string; access: KeyOnBarrier }> {
    const { id, keyRef } = request.params as { id: string; keyRef: string };
    const missing = () => new ApiError('not_found', { message: 'No such key among yours.' });
    if (!/^D[0-9A-Z]{10}$/.test(id) || !/^\d{1,9}$/.test(keyRef)) throw missing();
    // Changing a key is granting: the owner's and a granting member's (docs/design.md section 9.2); anyone else,
    // a member who may only look included, is told of the key as of one that does not exist.
    const barrier = await customerBarrier(ctx.db, customer.customerId, id, 'grant').catch(
      (error: unknown) => {
        throw error instanceof ApiError && error.code === 'not_found' ? missing() : error;
      },
    );
    const access = await keyOnBarrier(ctx.db, {
      ownerId: barrier.ownerId,
      deviceId: id,
      keyRef: Number(keyRef),
      now: ctx.clock.now(),
    });
    if (!access || access.revokedAt) throw missing();
    return { barrierId: id, access };
  }

  async function show(
    request: FastifyRequest,
    reply: FastifyReply,
    customer: Session,
    { barrierId, access }: { barrierId: string; access: KeyOnBarrier },
    form: KeyShapeForm,
    status = 200,
  ): Promise<FastifyReply> {
    const barrier = await customerBarrier(ctx.db, customer.customerId, barrierId, 'grant');
    const proposal = await keyProposal(ctx.db, access.keyRef);
    const words = proposal ? shapeWords(proposal, barrier.timeZone, { withZone: true }) : [];
    return sendPage(
      reply,
      <KeyShapePage
        page={pageContext(request, reply)}
        barrier={barrier}
        access={access}
        proposal={words}
        form={form}
      />,
      status,
    );
  }
}

function lifetimeOf(body: unknown, access: KeyOnBarrier): KeyShapeForm['lifetime'] {
  const posted = textField(body, 'lifetime');
  if (posted === 'keep' && access.expiresAt) return 'keep';
  return posted === 'date' ? 'date' : 'withdrawn';
}

/** The key's end as the form says it, or undefined with the problem in `errors`. */
function readEnd(
  form: KeyShapeForm,
  access: KeyOnBarrier,
  now: Date,
  errors: FieldErrors,
): { keep: true } | { keep: false; at: Date | null } | undefined {
  if (form.lifetime === 'keep' && access.expiresAt) return { keep: true };
  if (form.lifetime === 'withdrawn') return { keep: false, at: null };
  const end = form.until ? endOfDay(form.until, now, access.timeZone) : null;
  if (!end) errors.until = 'Choose the last day of access.';
  else if (!end.ok) errors.until = end.problem;
  else return { keep: false, at: end.expiresAt };
  return undefined;
}
