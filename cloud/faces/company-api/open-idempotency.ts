import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { Caller } from '../../rules/call-auth/authenticate.js';
import {
  claimIdempotencyKey,
  type IdempotencyClaim,
  releaseClaim,
  type StoredAnswer,
  storeAnswer,
} from '../../rules/idempotency/idempotency.js';
import { type OpenBody, type Opener, readOpenBody } from '../../rules/opening/open.js';

/**
 * `open` with an Idempotency-Key. Unlike `request`, an open spans a round trip to the gate, so the key is
 * claimed and committed first, and the outcome stored afterwards, refusals and device failures included:
 * a retry after a timeout gets the first outcome back and never opens the gate a second time. A 429
 * `rate_limit` is not kept: it tells the caller to retry after Retry-After (cloud/README.md, "Retries"), and
 * nothing was sent to the gate, so the retry with the same key runs again; nor is a 503 `overloaded`, which
 * comes before the key is claimed.
 */
export async function handleOpenIdempotently(
  ctx: CloudContext,
  opener: Opener,
  caller: Caller,
  idempotency: Omit<IdempotencyClaim, 'companyId' | 'action'>,
  log: FastifyBaseLogger = ctx.log,
): Promise<StoredAnswer> {
  // Bad input is refused before the key is claimed, so a corrected retry may use the same key.
  const body = readOpenBody(caller.body);
  const claim: IdempotencyClaim = {
    ...idempotency,
    companyId: caller.company.id,
    action: 'open',
    commandId: randomUUID(),
  };
  // A place in the opening queue first: `overloaded` leaves no claim behind, so the retry runs.
  const place = opener.enter(caller.company.id);
  try {
    return await claimAndOpen(ctx, opener, caller, { body, claim, place, log });
  } finally {
    place();
  }
}

async function claimAndOpen(
  ctx: CloudContext,
  opener: Opener,
  caller: Caller,
  call: { body: OpenBody; claim: IdempotencyClaim; place: () => void; log: FastifyBaseLogger },
): Promise<StoredAnswer> {
  const { body, claim, place, log } = call;
  const previous = await ctx.db.transaction().execute((trx) => claimIdempotencyKey(ctx, trx, claim));
  if (previous) return previous;
  let answer: StoredAnswer;
  try {
    answer = await opener.openWith(caller, body, claim.commandId, log, place);
  } catch (error) {
    // Nothing is known to have happened at the gate (an unexpected failure, a rate limit): a retry may run.
    if (!(error instanceof ApiError) || error.code === 'rate_limit') {
      await releaseClaim(ctx.db, claim);
      throw error;
    }
    answer = { status: error.status, body: { ...error.toBody() } };
  }
  await storeAnswer(ctx.db, claim, answer);
  return answer;
}
