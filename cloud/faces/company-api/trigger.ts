import { triggerBodySchema } from '../../../shared/company-api/event-calls.js';
import type { CloudContext } from '../../foundation/context.js';
import { validate } from '../../foundation/http/validation.js';
import type { Caller } from '../../rules/call-auth/authenticate.js';
import { triggerSample } from '../../rules/events/sample-events.js';
import type { StoredAnswer } from '../../rules/idempotency/idempotency.js';

/** `a=trigger`: a sample event of the kind named, written to the company's outbox. */
export async function handleTrigger(ctx: CloudContext, caller: Caller): Promise<StoredAnswer> {
  const body = validate(triggerBodySchema, caller.body);
  return { status: 200, body: await triggerSample(ctx, caller.company.id, body.type) };
}
