import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningCloud } from '../../cloud/cloud.js';
import type { AssembledContext } from '../../cloud/context.js';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { issueSecret } from '../../cloud/rules/call-auth/secret.js';
import { approveCompany, createCompany } from '../../cloud/rules/companies/companies.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { createDevice, pairDevice } from '../../cloud/rules/devices/devices.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { createRequest } from '../../cloud/rules/requests/requests.js';
import { provision } from '../../device/cli/provision.js';

/** One barrier of the fleet: its controller's config, the objects' numbers and the keys a company holds on it. */
export interface FleetBarrier {
  configPath: string;
  deviceId: string;
  numberIds: number[];
  keyRefs: number[];
}

export interface Fleet {
  barriers: FleetBarrier[];
  company: { org_id: number; secret: string };
}

export interface FleetSize {
  controllers: number;
  objectsPerController: number;
  keysPerController: number;
}

/** Set-up work runs this many at a time: quick, and still the order a real fleet grows in. */
const PARALLEL = 8;

async function inParallel<T>(count: number, make: (index: number) => Promise<T>): Promise<T[]> {
  const made: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      made[index] = await make(index);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return made;
}

/**
 * The fleet as installers and customers make it: each controller provisioned through the cloud's HTTP API with
 * its own key pair (`provision()`, as `gatelink-device provision` does), paired by its own customer; one
 * company holding `keysPerController` keys on every barrier, each with the default rate limit.
 */
export async function buildFleet(cloud: RunningCloud, dir: string, size: FleetSize): Promise<Fleet> {
  const { ctx } = cloud;
  const objectsPath = join(dir, 'objects.yaml');
  const objects = Array.from(
    { length: size.objectsPerController },
    (_, i) => `  - id: gate${i + 1}\n    label: Gate ${i + 1}\n    kind: simulated\n    pulse_ms: 0\n`,
  );
  writeFileSync(
    objectsPath,
    `objects:\n${objects.join('')}clock:\n  check: none\ntelemetry:\n  interval_s: 3600\n`,
  );
  const company = await createCompany(ctx, { name: 'Fleet Couriers Ltd' });
  await approveCompany(ctx, company.id);
  const { secret } = await issueSecret(ctx, company.id);
  const cloudUrl = cloud.baseUrl.replace('localhost', '127.0.0.1');

  const barriers = await inParallel(size.controllers, async (index) => {
    const customer = await createCustomer(ctx, { displayName: `Customer ${index + 1}` });
    const created = await createDevice(ctx, { label: `Barrier ${index + 1}` });
    const configPath = join(dir, `controller-${index + 1}`, 'device.yaml');
    mkdirSync(join(dir, `controller-${index + 1}`), { recursive: true });
    const { response } = await provision({
      cloud: cloudUrl,
      code: created.provisioning_code,
      configPath,
      objectsFrom: objectsPath,
    });
    const barrier = await pairDevice(ctx, { customerId: customer.id, pairingCode: response.pairing_code! });
    const numberIds = barrier.objects.map((object) => object.number_id);
    const keyRefs: number[] = [];
    for (let k = 0; k < size.keysPerController; k++) {
      keyRefs.push(
        await grantKey(ctx, {
          companyId: company.id,
          customerId: customer.id,
          deviceId: created.device_id,
          objectIds: numberIds,
          ref: `FLEET-${index}-${k}`,
        }),
      );
    }
    if ((index + 1) % 20 === 0) process.stdout.write(` ${index + 1}`);
    return { configPath, deviceId: created.device_id, numberIds, keyRefs };
  });
  return { barriers, company: { org_id: company.id, secret } };
}

/**
 * A key as a customer grants it: the company's request (`ref`), claimed by the customer and issued on the
 * barrier's objects, without end. Returns its `key_ref`.
 */
export async function grantKey(
  ctx: AssembledContext,
  grant: { companyId: number; customerId: number; deviceId: string; objectIds: number[]; ref: string },
): Promise<number> {
  const request = await ctx.db
    .transaction()
    .execute((trx) =>
      createRequest(trx, { companyId: grant.companyId, ref: grant.ref, ttlHours: 24, now: ctx.clock.now() }),
    );
  await claimRequest(ctx, { code: request.code, customerId: grant.customerId });
  const { keyRef } = await issueAccessKey(ctx, {
    code: request.code,
    customerId: grant.customerId,
    deviceId: grant.deviceId,
    objectIds: grant.objectIds,
    keyExpiresAt: null,
  });
  return keyRef;
}
