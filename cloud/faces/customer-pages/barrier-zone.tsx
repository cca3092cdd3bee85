import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { ApiError } from '../../../shared/errors.js';
import { textField } from '../../foundation/web/form-input.js';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import { signedIn } from '../../foundation/web/web-deps.js';
import { ZoneOptions } from '../../foundation/web/zone-options.js';
import { setBarrierTimeZone } from '../../rules/devices/barrier-zone.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';

/**
 * The barrier's time zone, on its page (docs/design.md section 10.4): the hours the customer allows companies are
 * read in it. A plain form with a list of the zones; a zone not on the list is refused and nothing changes.
 */
export function BarrierZoneCard(props: { page: PageContext; barrierId: string; zone: string }): VNode {
  return (
    <section class="card" aria-labelledby="zone-title">
      <h2 id="zone-title">Time zone</h2>
      <form method="post" action={`/barriers/${props.barrierId}/time-zone`}>
        <CsrfField page={props.page} />
        <label for="time-zone">The barrier's local time</label>
        <p class="hint" id="time-zone-hint">
          The hours you allow companies are read in this zone, and their times are shown in it.
        </p>
        <select id="time-zone" name="time_zone" aria-describedby="time-zone-hint">
          <ZoneOptions chosen={props.zone} />
        </select>
        <p class="actions">
          <button type="submit" class="secondary">
            Save time zone
          </button>
        </p>
      </form>
    </section>
  );
}

export async function barrierZoneRoutes(app: FastifyInstance, deps: CustomerPagesDeps): Promise<void> {
  app.post('/barriers/:id/time-zone', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const { id } = request.params as { id: string };
    if (!/^D[0-9A-Z]{10}$/.test(id))
      throw new ApiError('not_found', { message: 'No such barrier among yours.' });
    await setBarrierTimeZone(deps.ctx.db, {
      customerId: customer.customerId,
      deviceId: id,
      zone: textField(request.body, 'time_zone').slice(0, 64),
    });
    return reply.redirect(`/barriers/${id}?zone=1`, 303);
  });
}
