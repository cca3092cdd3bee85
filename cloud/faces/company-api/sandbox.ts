import { sandboxBodySchema } from '../../../shared/company-api/sandbox-calls.js';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { validate } from '../../foundation/http/validation.js';
import type { Caller } from '../../rules/call-auth/authenticate.js';
import type { StoredAnswer } from '../../rules/idempotency/idempotency.js';
import { moveSandbox } from '../../rules/sandbox/sandbox-customer.js';

/** The header every answer of the sandbox carries, refusals too (docs/design.md section 11.9). */
export const SANDBOX_HEADER = 'gatelink-sandbox';

/** An answer's body as the sandbox gives it: `"sandbox": true` beside what the live service says. */
export function markedSandbox(body: Record<string, unknown>): Record<string, unknown> {
  return { sandbox: true, ...body };
}

/** `a=sandbox`: a move of the sandbox's simulated customer or barrier (shared/company-api/sandbox-calls.ts). */
export async function handleSandbox(ctx: CloudContext, caller: Caller): Promise<StoredAnswer> {
  if (!caller.sandbox) throw new ApiError('sandbox_only');
  const call = validate(sandboxBodySchema, caller.body);
  return { status: 200, body: await moveSandbox(ctx, caller.company, call) };
}
