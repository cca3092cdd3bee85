import type { SandboxCall } from '../../../shared/company-api/sandbox-calls.js';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { SandboxOutcome } from '../../foundation/db/schema.js';
import { issueAccessKey, revokeAccessKey } from '../access-keys/access-keys.js';
import type { Company } from '../companies/companies.js';
import { proposalOf } from '../grant-shapes/proposals.js';
import { keyShapeOf } from '../grant-shapes/stored-shape.js';
import { claimRequest } from '../requests/claim.js';
import { findRequestByCode } from '../requests/requests.js';

/**
 * What a company's developer makes the sandbox's simulated customer and barrier do (docs/design.md section
 * 11.9), through `a=sandbox` or the account area: grant a request (claimed and granted at once, with the shape
 * asked for or one given), withdraw a key, and choose what the barrier's next openings come to. Each move is the
 * customer application's own rule, so the events and answers are those a real customer's move makes.
 */

/** What a move answers: the state it left, as the company reads it in `status`. */
export type SandboxAnswer =
  | { code: string; key_ref: number }
  | { key_ref: number; withdrawn: true }
  | { outcome: SandboxOutcome };

interface SandboxParts {
  customerId: number;
  deviceId: string;
}

async function partsOf(ctx: CloudContext, sandbox: Company): Promise<SandboxParts> {
  const row = await ctx.db
    .selectFrom('sandboxes')
    .select(['customer_id', 'device_id'])
    .where('company_id', '=', sandbox.id)
    .executeTakeFirst();
  if (!row) throw new Error(`company ${sandbox.id} is not a sandbox`);
  return { customerId: row.customer_id, deviceId: row.device_id };
}

export async function moveSandbox(
  ctx: CloudContext,
  sandbox: Company,
  call: SandboxCall,
): Promise<SandboxAnswer> {
  const parts = await partsOf(ctx, sandbox);
  switch (call.do) {
    case 'grant':
      return grant(ctx, sandbox, parts, call);
    case 'withdraw':
      await revokeAccessKey(ctx, {
        keyRef: call.key_ref,
        customerId: parts.customerId,
        deviceId: parts.deviceId,
      });
      return { key_ref: call.key_ref, withdrawn: true };
    case 'outcome':
      await ctx.db
        .updateTable('sandboxes')
        .set({ outcome: call.outcome })
        .where('company_id', '=', sandbox.id)
        .execute();
      return { outcome: call.outcome };
  }
}

/** Claims and grants the request, on the barrier's every object, with the shape given or else the one asked for. */
async function grant(
  ctx: CloudContext,
  sandbox: Company,
  parts: SandboxParts,
  call: Extract<SandboxCall, { do: 'grant' }>,
): Promise<SandboxAnswer> {
  const request = await findRequestByCode(ctx.db, call.code);
  // Another company's code, the live one's among them, is answered like an unknown one (as `status` does).
  if (!request || request.company_id !== sandbox.id) throw new ApiError('not_found');
  await claimRequest(ctx, { code: request.code, customerId: parts.customerId });
  const objects = await ctx.db
    .selectFrom('device_objects')
    .select('id')
    .where('device_id', '=', parts.deviceId)
    .where('removed_at', 'is', null)
    .execute();
  const shape = call.shape === undefined ? proposalOf(request.proposed_shape) : keyShapeOf(call.shape);
  const { keyRef } = await issueAccessKey(ctx, {
    code: request.code,
    customerId: parts.customerId,
    deviceId: parts.deviceId,
    objectIds: objects.map((object) => object.id),
    keyExpiresAt: shape?.endsAt ?? null,
    ...(shape ? { shape } : {}),
  });
  return { code: request.code, key_ref: keyRef };
}
