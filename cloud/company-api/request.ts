import { z } from 'zod';
import type { Caller } from '../auth/authenticate.js';
import type { CloudContext } from '../context.js';
import { isPrintableText, notPrintableMessage } from '../http/printable-text.js';
import { formatTimestamp } from '../http/timestamps.js';
import { validate } from '../http/validation.js';
import { createRequest, TTL_HOURS } from '../requests/requests.js';
import { claimIdempotencyKey, type IdempotencyClaim, type StoredAnswer, storeAnswer } from './idempotency.js';

/** `ref`: 1..64 printable characters (docs/design.md section 3; cloud/README.md, "Printable text"). */
const refSchema = z
  .string()
  .min(1, 'ref must be 1..64 printable characters')
  .max(64, 'ref must be 1..64 printable characters')
  .refine(isPrintableText, notPrintableMessage('ref'));

export const requestBodySchema = z.looseObject({
  ref: refSchema.optional(),
  ttl_hours: z
    .number({ error: 'ttl_hours must be an integer' })
    .int('ttl_hours must be an integer')
    .min(TTL_HOURS.min, `ttl_hours must be ${TTL_HOURS.min}..${TTL_HOURS.max}`)
    .max(TTL_HOURS.max, `ttl_hours must be ${TTL_HOURS.min}..${TTL_HOURS.max}`)
    .optional(),
});

/** `a=request`: a new access request whose `url` the company shows as a QR code. */
export async function handleRequest(
  ctx: CloudContext,
  caller: Caller,
  idempotency: Omit<IdempotencyClaim, 'companyId' | 'action'> | undefined,
): Promise<StoredAnswer> {
  const body = validate(requestBodySchema, caller.body);
  const ttlHours = body.ttl_hours ?? TTL_HOURS.default;
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
