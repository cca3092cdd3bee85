import { statusBodySchema } from '../../../shared/company-api/calls.js';
import type { CloudContext } from '../../foundation/context.js';
import { validate } from '../../foundation/http/validation.js';
import type { Caller } from '../../rules/call-auth/authenticate.js';
import type { StoredAnswer } from '../../rules/idempotency/idempotency.js';
import { requestStatus } from '../../rules/requests/requests.js';

/** `a=status`: the state of one of the company's requests. */
export async function handleStatus(ctx: CloudContext, caller: Caller): Promise<StoredAnswer> {
  const body = validate(statusBodySchema, caller.body);
  return { status: 200, body: await requestStatus(ctx.db, caller.company.id, body.code, ctx.clock.now()) };
}
