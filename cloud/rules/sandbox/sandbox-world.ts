import { randomCode } from '../../../shared/codes.js';
import { SigningKey } from '../../../shared/crypto/ed25519.js';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { CompanyStatus, SandboxOutcome } from '../../foundation/db/schema.js';
import { isUniqueViolation } from '../../foundation/db/unique-violation.js';
import { seal, unseal } from '../../foundation/web/sealing.js';
import type { Company } from '../companies/companies.js';

/**
 * A company's sandbox (docs/design.md section 11.9): a company of its own beside the live one
 * (`companies.sandbox_of`), with a simulated customer who owns one barrier that the cloud runs as its controller.
 * Made on the company's first sandbox call, so that a developer tries everything without asking anybody; its
 * requests, keys, journal, events and rate limits are apart from the live ones by the rules that keep any two
 * companies apart, so sandbox traffic never reaches a real barrier or a real customer's journal.
 */

/** The sealing purpose of a sandbox controller's key (cloud/foundation/web/sealing.ts). */
const DEVICE_KEY_PURPOSE = 'sandbox-device-key';

/** The sandbox barrier's one object, as a controller's config would name it. */
export const SANDBOX_OBJECT = { id: 'gate', label: 'Sandbox gate' } as const;

/** The sandbox barrier, as an installer would label it. */
const SANDBOX_BARRIER = 'Sandbox barrier';

/** What the simulated customer is called where a page or an event names the owner. */
const SANDBOX_CUSTOMER = 'Sandbox customer';

/**
 * The sandbox company of `company`, made with its simulated customer and barrier if it has none yet. A rejected
 * or suspended company has no sandbox: it is refused as it would be live.
 */
export async function sandboxCompany(ctx: CloudContext, company: Company): Promise<Company> {
  if (company.sandbox_of !== null) return company;
  if (!sandboxOpenTo(company.status)) throw new ApiError('org_not_approved');
  const found = await findSandbox(ctx, company.id);
  if (found) return found;
  try {
    return await makeSandbox(ctx, company);
  } catch (error) {
    // Two first calls at once: the other made it.
    if (!isUniqueViolation(error)) throw error;
    return (await findSandbox(ctx, company.id))!;
  }
}

/** The sandbox company of the company `companyId`, if it has called its sandbox yet. */
export function findSandbox(ctx: CloudContext, companyId: number): Promise<Company | undefined> {
  return ctx.db.selectFrom('companies').selectAll().where('sandbox_of', '=', companyId).executeTakeFirst();
}

/** Whether a company in `status` has a sandbox: approved, or waiting for approval; not refused, nor suspended. */
export function sandboxOpenTo(status: CompanyStatus): boolean {
  return status === 'approved' || status === 'pending';
}

async function makeSandbox(ctx: CloudContext, company: Company): Promise<Company> {
  const now = ctx.clock.now();
  const key = SigningKey.generate();
  const sealedKey = await seal(ctx.db, DEVICE_KEY_PURPOSE, key.toPem());
  return ctx.db.transaction().execute(async (trx) => {
    const sandbox = await trx
      .insertInto('companies')
      .values({
        name: company.name,
        logo_hash: company.logo_hash,
        status: 'approved',
        approved_at: now,
        created_at: now,
        sandbox_of: company.id,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const customer = await trx
      .insertInto('customers')
      .values({ display_name: SANDBOX_CUSTOMER, created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    const device = await trx
      .insertInto('devices')
      .values({
        id: `D${randomCode(10)}`,
        label: SANDBOX_BARRIER,
        name: SANDBOX_BARRIER,
        customer_id: customer.id,
        public_key: key.publicKey.base64,
        provisioned_at: now,
        paired_at: now,
        online: true,
        state_at: now,
        created_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('device_objects')
      .values({
        device_id: device.id,
        local_id: SANDBOX_OBJECT.id,
        label: SANDBOX_OBJECT.label,
        kind: 'simulated',
        has_sensor: true,
      })
      .execute();
    await trx
      .insertInto('sandboxes')
      .values({
        company_id: sandbox.id,
        customer_id: customer.id,
        device_id: device.id,
        device_key: sealedKey,
        created_at: now,
      })
      .execute();
    return sandbox;
  });
}

/** A barrier the cloud simulates, as its controller needs it: the key it signs with and its next outcome. */
export interface SandboxBarrier {
  deviceId: string;
  key: SigningKey;
  outcome: SandboxOutcome;
}

/** The sandbox barrier of `deviceId`, or null for any other device (a real controller's). */
export async function sandboxBarrier(ctx: CloudContext, deviceId: string): Promise<SandboxBarrier | null> {
  const row = await ctx.db
    .selectFrom('sandboxes')
    .select(['device_key', 'outcome'])
    .where('device_id', '=', deviceId)
    .executeTakeFirst();
  if (!row) return null;
  const pem = await unseal(ctx.db, DEVICE_KEY_PURPOSE, row.device_key);
  if (pem === null) throw new Error(`the sandbox key of ${deviceId} does not open with this cloud's secret`);
  return { deviceId, key: SigningKey.fromPem(pem), outcome: row.outcome };
}
