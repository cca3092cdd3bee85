import type { SandboxCall } from '../../../shared/company-api/sandbox-calls.js';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';
import type { SandboxOutcome } from '../../foundation/db/schema.js';
import { type Alongside, issueAccessKey, revokeAccessKey } from '../access-keys/access-keys.js';
import type { Company } from '../companies/companies.js';
import { proposalOf } from '../grant-shapes/proposals.js';
import { keyShapeOf } from '../grant-shapes/stored-shape.js';
import { type ActingMember, recordMemberAction } from '../member-actions/member-actions.js';
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

/**
 * Makes the move. `by`, a member moving from the company area, has the move in the company's record of its
 * members (docs/design.md section 11.8), in the move's transaction; a move by API is the company's own call.
 */
export async function moveSandbox(
  ctx: CloudContext,
  sandbox: Company,
  call: SandboxCall,
  by?: ActingMember,
): Promise<SandboxAnswer> {
  const parts = await partsOf(ctx, sandbox);
  const recorded =
    (name: 'sandbox-granted' | 'sandbox-withdrawn' | 'sandbox-outcome', detail: (keyRef: number) => string) =>
    async (trx: Database, keyRef = 0) => {
      if (by)
        await recordMemberAction(trx, ctx.clock.now(), {
          companyId: sandbox.id,
          by,
          name,
          detail: detail(keyRef),
        });
    };
  switch (call.do) {
    case 'grant':
      return grant(
        ctx,
        sandbox,
        parts,
        call,
        recorded('sandbox-granted', (keyRef) => `${call.code} (key ${keyRef})`),
      );
    case 'withdraw':
      await revokeAccessKey(ctx, {
        keyRef: call.key_ref,
        customerId: parts.customerId,
        deviceId: parts.deviceId,
        alongside: recorded('sandbox-withdrawn', (keyRef) => String(keyRef)),
      });
      return { key_ref: call.key_ref, withdrawn: true };
    case 'outcome':
      await ctx.db.transaction().execute(async (trx) => {
        await trx
          .updateTable('sandboxes')
          .set({ outcome: call.outcome })
          .where('company_id', '=', sandbox.id)
          .execute();
        await recorded('sandbox-outcome', () => call.outcome)(trx);
      });
      return { outcome: call.outcome };
  }
}

/** Claims and grants the request, on the barrier's every object, with the shape given or else the one asked for. */
async function grant(
  ctx: CloudContext,
  sandbox: Company,
  parts: SandboxParts,
  call: Extract<SandboxCall, { do: 'grant' }>,
  alongside: Alongside,
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
    alongside,
  });
  return { code: request.code, key_ref: keyRef };
}

/** A request of the sandbox as its page lists it: waiting for the simulated customer, or granted. */
export interface SandboxRequest {
  code: string;
  ref: string | null;
  createdAt: Date;
  /** The key granted on it, while it stands; null while it waits. */
  keyRef: number | null;
}

/**
 * What the company area's sandbox page shows (docs/design.md section 11.9): the outcome of the next openings, the
 * requests waiting for the simulated customer and the keys it granted and has not withdrawn, newest first; null
 * for a company that has no sandbox yet.
 */
export async function sandboxState(
  ctx: CloudContext,
  companyId: number,
): Promise<{ sandboxId: number; outcome: SandboxOutcome; requests: SandboxRequest[] } | null> {
  const sandbox = await ctx.db
    .selectFrom('sandboxes')
    .innerJoin('companies', 'companies.id', 'sandboxes.company_id')
    .select(['sandboxes.company_id', 'sandboxes.outcome'])
    .where('companies.sandbox_of', '=', companyId)
    .executeTakeFirst();
  if (!sandbox) return null;
  const now = ctx.clock.now();
  const rows = await ctx.db
    .selectFrom('requests')
    .leftJoin('keys', (join) =>
      join.onRef('keys.request_id', '=', 'requests.id').on('keys.revoked_at', 'is', null),
    )
    .select(['requests.code', 'requests.ref', 'requests.created_at', 'requests.state', 'keys.id as key_id'])
    .where('requests.company_id', '=', sandbox.company_id)
    .where((eb) =>
      eb.or([
        eb.and([eb('requests.state', 'in', ['new', 'claimed']), eb('requests.expires_at', '>', now)]),
        eb('requests.state', '=', 'issued'),
      ]),
    )
    .orderBy('requests.id', 'desc')
    .limit(SANDBOX_REQUESTS_SHOWN)
    .execute();
  return {
    sandboxId: sandbox.company_id,
    outcome: sandbox.outcome,
    requests: rows.map((row) => ({
      code: row.code,
      ref: row.ref,
      createdAt: row.created_at,
      keyRef: row.state === 'issued' ? row.key_id : null,
    })),
  };
}

/** The sandbox's requests a page shows at most: a developer's tries, not a company's history. */
export const SANDBOX_REQUESTS_SHOWN = 20;
