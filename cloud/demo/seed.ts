import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import type { AssembledContext } from '../context.js';
import { issueAccessKey } from '../rules/access-keys/access-keys.js';
import { issueSecret } from '../rules/call-auth/secret.js';
import { approveCompany, createCompany } from '../rules/companies/companies.js';
import { createCustomer } from '../rules/customers/customers.js';
import { createDevice, pairDevice } from '../rules/devices/devices.js';
import { claimRequest } from '../rules/requests/claim.js';
import { createRequest } from '../rules/requests/requests.js';
import {
  DEMO_BARRIER,
  type DemoControllerSpec,
  demoDeviceFolder,
  provisionDemoController,
  SPARE_BARRIER,
} from './controller.js';

/**
 * The demo's world, made once and kept in the data folder: a customer with a paired controller, a company
 * that signs with its domain key, a company with a secret, and a key already issued to the latter on the
 * simulated barrier. A later start finds it again; a wiped database makes it anew.
 */
export const DEMO_DOMAIN = 'courier.demo.localhost';
/** The demo customer's e-mail: signing in with it sends a one-time code, which the demo prints. */
export const DEMO_CUSTOMER_EMAIL = 'customer@demo.localhost';
/** The owner of Demo Cleaning Ltd's account area (docs/design.md section 11.1). */
export const DEMO_COMPANY_EMAIL = 'office@cleaning.demo.localhost';

const stateSchema = z.object({
  customerId: z.number(),
  deviceId: z.string(),
  secretCompany: z.object({ orgId: z.number(), secret: z.string() }),
  courier: z.object({ id: z.number(), domain: z.string(), code: z.string() }),
  key: z.object({ keyRef: z.number(), numberIds: z.array(z.number()) }),
  /** The spare controller a new account adds; made on the first start that lacks it. */
  spareDeviceId: z.string().optional(),
});
export type DemoState = z.infer<typeof stateSchema>;

export function demoFolder(dataDir: string): string {
  return join(dataDir, 'demo');
}

export function demoCompanyKeyPath(dataDir: string): string {
  return join(demoFolder(dataDir), 'courier-key.pem');
}

/** The demo courier's key: its "domain" cannot serve a key file, so the demo serves it from here. */
export function demoCompanyKey(dataDir: string): SigningKey {
  const file = demoCompanyKeyPath(dataDir);
  if (existsSync(file)) return SigningKey.fromPem(readFileSync(file, 'utf8'));
  mkdirSync(demoFolder(dataDir), { recursive: true });
  const key = SigningKey.generate();
  writeFileSync(file, key.toPem(), { mode: 0o600 });
  return key;
}

export async function loadOrSeed(
  ctx: AssembledContext,
  cloudUrl: string,
  log: (line: string) => void,
): Promise<DemoState> {
  const file = join(demoFolder(ctx.config.dataDir), 'state.json');
  const existing = readState(file);
  let state: DemoState;
  if (existing && (await stillThere(ctx, DEMO_BARRIER, existing.deviceId))) {
    state = existing;
  } else {
    rmSync(demoDeviceFolder(ctx.config.dataDir), { recursive: true, force: true });
    log('First start: creating the demo customer, companies and controller...');
    state = await seed(ctx, cloudUrl);
  }
  if (!state.spareDeviceId || !(await stillThere(ctx, SPARE_BARRIER, state.spareDeviceId))) {
    state = { ...state, spareDeviceId: await seedSpare(ctx, cloudUrl) };
  }
  await giveDemoCustomerEmail(ctx, state.customerId);
  await giveDemoCompanyOwner(ctx, state.secretCompany.orgId);
  writeFileSync(file, JSON.stringify(state, null, 2), { mode: 0o600 });
  return state;
}

/** The spare controller: provisioned, online, and waiting to be added to an account with its pairing code. */
async function seedSpare(ctx: AssembledContext, cloudUrl: string): Promise<string> {
  rmSync(demoDeviceFolder(ctx.config.dataDir, SPARE_BARRIER), { recursive: true, force: true });
  const device = await createDevice(ctx, { label: SPARE_BARRIER.label });
  await provisionDemoController(ctx.config.dataDir, cloudUrl, device.provisioning_code, SPARE_BARRIER);
  return device.device_id;
}

/** Demo data made before customers could sign in has a customer without an e-mail; give it one. */
async function giveDemoCustomerEmail(ctx: AssembledContext, customerId: number): Promise<void> {
  await ctx.db
    .updateTable('customers')
    .set({ email: DEMO_CUSTOMER_EMAIL, email_verified_at: ctx.clock.now() })
    .where('id', '=', customerId)
    .where('email', 'is', null)
    .execute();
}

/**
 * An account that owns Demo Cleaning Ltd, so that the demo's company area has someone to sign in; made on every
 * start that lacks it, as data folders from before the company area have none.
 */
async function giveDemoCompanyOwner(ctx: AssembledContext, companyId: number): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db
    .insertInto('customers')
    .values({
      display_name: 'Demo office',
      email: DEMO_COMPANY_EMAIL,
      email_verified_at: now,
      created_at: now,
    })
    .onConflict((oc) => oc.column('email').doNothing())
    .execute();
  const owner = await ctx.db
    .selectFrom('customers')
    .select('id')
    .where('email', '=', DEMO_COMPANY_EMAIL)
    .executeTakeFirstOrThrow();
  await ctx.db
    .insertInto('company_members')
    .values({
      company_id: companyId,
      customer_id: owner.id,
      email: DEMO_COMPANY_EMAIL,
      role: 'owner',
      added_at: now,
      added_by: owner.id,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

function readState(file: string): DemoState | null {
  if (!existsSync(file)) return null;
  const parsed = stateSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  return parsed.success ? parsed.data : null;
}

async function stillThere(
  ctx: AssembledContext,
  spec: DemoControllerSpec,
  deviceId: string,
): Promise<boolean> {
  const device = await ctx.db
    .selectFrom('devices')
    .select('provisioned_at')
    .where('id', '=', deviceId)
    .executeTakeFirst();
  return (
    Boolean(device?.provisioned_at) &&
    existsSync(join(demoDeviceFolder(ctx.config.dataDir, spec), 'device.yaml'))
  );
}

async function seed(ctx: AssembledContext, cloudUrl: string): Promise<DemoState> {
  const customer = await createCustomer(ctx, { displayName: 'Demo customer' });

  const device = await createDevice(ctx, { label: DEMO_BARRIER.label });
  await provisionDemoController(ctx.config.dataDir, cloudUrl, device.provisioning_code);
  const paired = await ctx.db
    .selectFrom('devices')
    .select('pairing_code')
    .where('id', '=', device.device_id)
    .executeTakeFirstOrThrow();
  const barrier = await pairDevice(ctx, { customerId: customer.id, pairingCode: paired.pairing_code! });

  const cleaner = await createCompany(ctx, { name: 'Demo Cleaning Ltd' });
  await approveCompany(ctx, cleaner.id);
  const { secret } = await issueSecret(ctx, cleaner.id);

  const courier = await createCompany(ctx, { name: 'Demo Courier', domain: DEMO_DOMAIN });
  await approveCompany(ctx, courier.id);

  // The cleaner asked, the customer claimed and granted both objects until revoked.
  const request = await ctx.db
    .transaction()
    .execute((trx) =>
      createRequest(trx, { companyId: cleaner.id, ref: 'DEMO-1', ttlHours: 24, now: ctx.clock.now() }),
    );
  await claimRequest(ctx, { code: request.code, customerId: customer.id });
  const numberIds = barrier.objects.map((object) => object.number_id);
  const { keyRef } = await issueAccessKey(ctx, {
    code: request.code,
    customerId: customer.id,
    deviceId: device.device_id,
    objectIds: numberIds,
    keyExpiresAt: null,
  });

  const courierRequest = await ctx.db
    .transaction()
    .execute((trx) =>
      createRequest(trx, { companyId: courier.id, ref: 'PARCEL-7', ttlHours: 720, now: ctx.clock.now() }),
    );

  return {
    customerId: customer.id,
    deviceId: device.device_id,
    secretCompany: { orgId: cleaner.id, secret },
    courier: { id: courier.id, domain: DEMO_DOMAIN, code: courierRequest.code },
    key: { keyRef, numberIds },
  };
}
