import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type ProgramRun, runProgram } from '../support/program-run.js';

/**
 * `gatelink-admin device pairing-code`, `device replace` and `device remove` (docs/design.md section 9.1), run
 * as an operator runs them, against a cloud listening on a real port.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const ADMIN = resolve(ROOT, 'bin/gatelink-admin.mjs');

let database: TestDatabase;
let cloud: TestCloud;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

function admin(args: string[]): Promise<ProgramRun> {
  const { OPERATOR_TOKEN: _token, GATELINK_URL: _url, ...env } = process.env;
  return runProgram([ADMIN, '--url', cloud.baseUrl, '--token', cloud.operatorToken, ...args], {
    cwd: ROOT,
    env,
  });
}

async function provisioned(): Promise<{ deviceId: string; pairingCode: string }> {
  const added = await cloud.ops('POST', '/ops/devices', { label: 'Depot' });
  const { device_id, provisioning_code } = added.body.device as {
    device_id: string;
    provisioning_code: string;
  };
  const response = await cloud.app.inject({
    method: 'POST',
    url: '/api/device/provision',
    payload: {
      code: provisioning_code,
      public_key: SigningKey.generate().publicKey.base64,
      objects: [{ id: 'gate', label: 'Main gate', kind: 'relay' }],
      version: '0.1.0',
    },
  });
  return { deviceId: device_id, pairingCode: (response.json() as { pairing_code: string }).pairing_code };
}

describe('gatelink-admin device lifecycle', () => {
  it('issues the pairing code of an unpaired controller, and says why not for a paired one', async () => {
    const controller = await provisioned();
    const run = await admin(['device', 'pairing-code', controller.deviceId]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`Pairing code of ${controller.deviceId}: ${controller.pairingCode}`);
    const customer = await createCustomer(cloud.ctx, { displayName: 'Depot owner' });
    await pairDevice(cloud.ctx, {
      customerId: customer.id,
      pairingCode: controller.pairingCode,
      name: 'Depot',
    });
    const refused = await admin(['device', 'pairing-code', controller.deviceId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('no customer’s account');
  });

  it('replaces a controller by ids and removes the old record once nothing refers to it', async () => {
    const old = await provisioned();
    const customer = await createCustomer(cloud.ctx, { displayName: 'Replacer' });
    await pairDevice(cloud.ctx, { customerId: customer.id, pairingCode: old.pairingCode, name: 'Depot' });
    const fresh = await provisioned();
    const usage = await admin(['device', 'replace', old.deviceId]);
    expect(usage.code).toBe(2);
    const run = await admin(['device', 'replace', old.deviceId, fresh.deviceId]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`Barrier moved from ${old.deviceId} to ${fresh.deviceId}`);
    expect(run.stdout).toContain('Objects carried over by label: Main gate.');
    const owner = await cloud.ctx.db
      .selectFrom('devices')
      .select(['customer_id', 'name'])
      .where('id', '=', fresh.deviceId)
      .executeTakeFirstOrThrow();
    expect(owner).toEqual({ customer_id: customer.id, name: 'Depot' });

    // Its keys and journal moved with the barrier: nothing refers to the old record any more.
    const removed = await admin(['device', 'remove', old.deviceId]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('deleted: nothing referred to it');
    const gone = await admin(['device', 'remove', old.deviceId]);
    expect(gone.code).toBe(1);
  });
});
