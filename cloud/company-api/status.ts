import { z } from 'zod';
import type { Caller } from '../auth/authenticate.js';
import type { CloudContext } from '../context.js';
import { validate } from '../http/validation.js';
import { requestStatus } from '../requests/requests.js';
import type { StoredAnswer } from './idempotency.js';

export const statusBodySchema = z.looseObject({
  code: z
    .string({ error: 'code must be the request code, a string' })
    .min(1, 'code must be the 12-character request code')
    .max(64, 'code must be the 12-character request code'),
});

/** `a=status`: the state of one of the company's requests. */
export async function handleStatus(ctx: CloudContext, caller: Caller): Promise<StoredAnswer> {
  const body = validate(statusBodySchema, caller.body);
  return { status: 200, body: await requestStatus(ctx.db, caller.company.id, body.code, ctx.clock.now()) };
}
