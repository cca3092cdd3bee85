import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { MAX_ID, validate } from '../../foundation/http/validation.js';
import { readerZone, sendPage } from '../../foundation/web/page.js';
import { pageContext, signedIn, type WebDeps } from '../../foundation/web/web-deps.js';
import { customerBarrier } from '../../rules/devices/customer-barriers.js';
import {
  type BarrierJournalFilter,
  barrierJournalPage,
  barrierScope,
} from '../../rules/journal/barrier-journal.js';
import { journalCsvStream } from '../../rules/journal/journal-csv.js';
import { ENTRY_OUTCOMES } from '../../rules/journal/outcome-words.js';
import { JournalPage } from './journal-page.js';

/**
 * A barrier's journal (docs/design.md section 10.5): `/barriers/<id>/journal`, a page of entries, and
 * `/barriers/<id>/journal.csv`, the same filters as a download. Both answer only the barrier's owner and the
 * people it is shared with (section 9.2), who read the owner's journal; anyone else's barrier answers 404 exactly
 * like one that does not exist, and a GET changes nothing.
 */

/** A device id as the cloud makes them; anything else cannot name a barrier, and is not looked up. */
const barrierParams = z.object({ id: z.string().regex(/^[A-Za-z0-9]{1,64}$/) });

/** A form's "All" choice sends the field empty: the same as leaving it out. */
const blankIsAbsent = (value: unknown) => (value === '' ? undefined : value);
const entryId = (what: string) =>
  z
    .string({ error: `${what} must be a number` })
    .regex(/^[1-9][0-9]{0,9}$/, `${what} must be a number`)
    .transform(Number)
    .refine((id) => id <= MAX_ID, `${what} must be a number`);

/**
 * The filters and the page, as query parameters. A value the page never makes (an unknown outcome, a company
 * that is not a number, a repeated field) answers 400 with a page that names the field; a company that holds
 * no key here is a valid filter with no entries.
 */
const journalQuery = z.object({
  company: z.preprocess(blankIsAbsent, entryId('company').optional()),
  outcome: z.preprocess(
    blankIsAbsent,
    z.enum(ENTRY_OUTCOMES, { error: 'outcome must be one of those in the list' }).optional(),
  ),
  before: z.preprocess(blankIsAbsent, entryId('before').optional()),
});

export async function journalRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  const { db } = deps.ctx;

  app.get('/barriers/:id/journal', async (request, reply) => {
    const asked = journalRequest(request, reply);
    if (!asked) return reply;
    const { where, filter, before } = asked;
    // The household reads the owner's journal (docs/design.md section 9.2): the role is read first, for the owner.
    const barrier = await customerBarrier(db, where.customerId, where.deviceId, 'look');
    const { scope, page } = await barrierJournalPage(
      db,
      { customerId: barrier.ownerId, deviceId: barrier.id },
      filter,
      before,
    );
    return sendPage(
      reply,
      <JournalPage
        page={pageContext(request, reply)}
        barrier={barrier}
        companies={scope.companies}
        filters={{ company: filter.companyId, outcome: filter.outcome }}
        before={before}
        entries={page.entries}
        older={page.older}
      />,
    );
  });

  app.get('/barriers/:id/journal.csv', async (request, reply) => {
    const asked = journalRequest(request, reply);
    if (!asked) return reply;
    const { where, filter } = asked;
    const barrier = await customerBarrier(db, where.customerId, where.deviceId, 'look');
    const scope = await barrierScope(db, barrier.ownerId, barrier.id);
    const day = deps.ctx.clock.now().toISOString().slice(0, 10);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="journal-${barrier.id}-${day}.csv"`)
      .header('cache-control', 'no-store')
      .send(journalCsvStream(db, scope, filter, { barrierName: barrier.name, zone: readerZone(request) }));
  });
}

interface JournalRequest {
  where: { customerId: number; deviceId: string };
  filter: BarrierJournalFilter;
  before: number | undefined;
}

/**
 * What both routes ask first: a signed-in customer (a browser that is not is sent to sign in), a barrier id
 * that can exist (else 404, as for any barrier not theirs), and valid filters (else 400, whoever's the
 * barrier: the answer tells nothing about it). Null when the reply was sent.
 */
function journalRequest(request: FastifyRequest, reply: FastifyReply): JournalRequest | null {
  const customer = signedIn(request, reply);
  if (!customer) return null;
  const params = barrierParams.safeParse(request.params);
  if (!params.success) throw new ApiError('not_found', { message: 'No such barrier among yours.' });
  const query = validate(journalQuery, request.query);
  return {
    where: { customerId: customer.customerId, deviceId: params.data.id },
    filter: { companyId: query.company, outcome: query.outcome },
    before: query.before,
  };
}
