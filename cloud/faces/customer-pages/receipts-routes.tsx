import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext, signedIn, type WebDeps } from '../../foundation/web/web-deps.js';
import { customerBarrier } from '../../rules/devices/customer-barriers.js';
import { receiptsHeader, receiptsStream } from '../../rules/receipts/receipts-export.js';
import { ReceiptsHelpPage } from './receipts-help-page.js';

/**
 * `/barriers/<id>/journal.receipts.jsonl` (docs/design.md section 5.3, docs/receipts.md): the customer's
 * receipts of the barrier, to check without trusting the cloud. As the CSV export (section 10.5): only the
 * barrier's owner and the people it is shared with; anyone else's barrier, or an id that cannot be one, answers 404 like a barrier that
 * does not exist; it streams.
 */
const barrierParams = z.object({ id: z.string().regex(/^[A-Za-z0-9]{1,64}$/) });

/** The verifier of docs/receipts.md; a test holds the two to the same text. */
export const VERIFIER = readFileSync(new URL('./verify_receipts.py', import.meta.url), 'utf8');

export async function receiptsRoutes(app: FastifyInstance, deps: WebDeps): Promise<void> {
  const { db } = deps.ctx;
  app.get('/receipts', async (request, reply) =>
    sendPage(reply, <ReceiptsHelpPage page={pageContext(request, reply)} verifier={VERIFIER} />),
  );
  app.get('/receipts/verify_receipts.py', async (_request, reply) =>
    reply
      .type('text/x-python; charset=utf-8')
      .header('content-disposition', 'attachment; filename="verify_receipts.py"')
      .send(VERIFIER),
  );
  app.get('/barriers/:id/journal.receipts.jsonl', async (request, reply) => {
    const customer = signedIn(request, reply);
    if (!customer) return reply;
    const params = barrierParams.safeParse(request.params);
    if (!params.success) throw new ApiError('not_found', { message: 'No such barrier among yours.' });
    const barrier = await customerBarrier(db, customer.customerId, params.data.id, 'look');
    const now = deps.ctx.clock.now();
    const header = await receiptsHeader(db, deps.ctx.serviceKey, {
      barrier: { id: barrier.id, name: barrier.name },
      // The household's receipts are the owner's chain (docs/design.md section 9.2).
      customerId: barrier.ownerId,
      now,
    });
    const day = now.toISOString().slice(0, 10);
    return reply
      .type('application/x-ndjson')
      .header('content-disposition', `attachment; filename="receipts-${barrier.id}-${day}.jsonl"`)
      .header('cache-control', 'no-store')
      .send(receiptsStream(db, header));
  });
}
