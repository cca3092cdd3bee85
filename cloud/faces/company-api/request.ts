import { requestBodySchema, TTL_HOURS } from '../../../shared/company-api/calls.js';
import { timestampInstant } from '../../../shared/company-api/grant-shape.js';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { formatTimestamp } from '../../foundation/http/timestamps.js';
import { validate } from '../../foundation/http/validation.js';
import type { Caller } from '../../rules/call-auth/authenticate.js';
import {
  claimIdempotencyKey,
  type IdempotencyClaim,
  type StoredAnswer,
  storeAnswer,
} from '../../rules/idempotency/idempotency.js';
import { createRequest } from '../../rules/requests/requests.js';

/** `a=request`: a new access request whose `url` the company shows as a QR code. */
export async function handleRequest(
  ctx: CloudContext,
  caller: Caller,
  idempotency: Omit<IdempotencyClaim, 'companyId' | 'action'> | undefined,
): Promise<StoredAnswer> {
  const body = validate(requestBodySchema, caller.body);
  const ttlHours = body.ttl_hours ?? TTL_HOURS.default;
  // A proposal that has ended before anyone could grant it asks for nothing a customer could give.
  const endsAt = body.shape?.ends_at === undefined ? null : timestampInstant(body.shape.ends_at);
  if (endsAt && endsAt <= ctx.clock.now()) {
    throw new ApiError('invalid_field', {
      field: 'shape.ends_at',
      message: 'shape.ends_at must be in the future.',
    });
  }
  return ctx.db.transaction().execute(async (trx) => {
    const claim = idempotency && { ...idempotency, companyId: caller.company.id, action: 'request' };
    if (claim) {
      const previous = await claimIdempotencyKey(ctx, trx, claim);
      if (previous) return previous;
    }
    const request = await createRequest(trx, {
      companyId: caller.company.id,
      ref: body.ref,
      ttlHours,
      proposedShape: body.shape ?? null,
      now: ctx.clock.now(),
    });
    const answer: StoredAnswer = {
      status: 200,
      body: {
        code: request.code,
        url: `${ctx.baseUrl()}/c/${request.code}`,
        expires_in_hours: ttlHours,
        expires_at: formatTimestamp(request.expires_at),
      },
    };
    if (claim) await storeAnswer(trx, claim, answer);
    return answer;
  });
}
