import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import type { ProvisionRequest } from '../../shared/protocol/provisioning.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * Provisioning and pairing (docs/design.md section 9) as the cloud enforces them: a provisioning code works
 * once and for 24 hours, the device's key must be a usable Ed25519 key, and a pairing code makes the
 * barrier one customer's, once.
 */
const HOUR = 3600 * 1000;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

async function newDevice(label = 'Yard gate'): Promise<{ device_id: string; provisioning_code: string }> {
  const answer = await cloud.ops('POST', '/ops/devices', { label });
  expect(answer.status).toBe(200);
  return answer.body.device as { device_id: string; provisioning_code: string };
}

function provisionBody(code: string, overrides: Partial<ProvisionRequest> = {}): ProvisionRequest {
  return {
    code,
    public_key: SigningKey.generate().publicKey.base64,
    objects: [
      { id: 'gate', label: 'Main gate', kind: 'relay' },
      { id: 'door', label: 'Side door', kind: 'gsm' },
    ],
    version: '0.1.0',
    ...overrides,
  };
}

async function provision(body: unknown) {
  const response = await cloud.app.inject({
    method: 'POST',
    url: '/api/device/provision',
    payload: body as object,
  });
  return { status: response.statusCode, body: response.json() as Record<string, unknown> };
}

describe('provisioning', () => {
  it('answers the device id, broker account, pinned command key, pairing code and object numbers', async () => {
    const device = await newDevice();
    const answer = await provision(provisionBody(device.provisioning_code));
    expect(answer.status).toBe(200);
    expect(answer.body.device_id).toBe(device.device_id);
    expect(answer.body.command_key).toBe(cloud.ctx.serviceKey.publicKey.base64);
    expect(answer.body.mqtt).toMatchObject({
      username: device.device_id,
      url: cloud.controllerLink.deviceUrl,
    });
    expect((answer.body.mqtt as { password: string }).password.length).toBeGreaterThanOrEqual(43);
    expect(answer.body.pairing_code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    const numbers = answer.body.numbers as { id: string; number_id: number; label: string }[];
    expect(numbers.map((n) => [n.id, n.label])).toEqual([
      ['gate', 'Main gate'],
      ['door', 'Side door'],
    ]);
    const stored = await cloud.ctx.db
      .selectFrom('devices')
      .select(['mqtt_password_hash', 'provisioning_code_hash'])
      .where('id', '=', device.device_id)
      .executeTakeFirstOrThrow();
    // Only a hash of the broker password is kept, and the code is gone.
    expect(stored.mqtt_password_hash).not.toContain((answer.body.mqtt as { password: string }).password);
    expect(stored.provisioning_code_hash).toBeNull();
  });

  it('accepts the code as a person types it: lowercase, without hyphens', async () => {
    const device = await newDevice();
    const typed = device.provisioning_code.replace(/-/g, '').toLowerCase();
    expect((await provision(provisionBody(typed))).status).toBe(200);
  });

  it('[attack:provisioning.code-reuse] refuses a code that was used already', async () => {
    const device = await newDevice();
    expect((await provision(provisionBody(device.provisioning_code))).status).toBe(200);
    const again = await provision(provisionBody(device.provisioning_code));
    expect(again).toMatchObject({ status: 403, body: { error: 'provisioning_code_invalid' } });
  });

  it('[attack:provisioning.code-reuse] refuses a code older than 24 hours', async () => {
    const device = await newDevice();
    clock.advance(24 * HOUR + 1000);
    const late = await provision(provisionBody(device.provisioning_code));
    expect(late).toMatchObject({ status: 403, body: { error: 'provisioning_code_invalid' } });
  });

  it('[attack:provisioning.code-reuse] refuses an unknown code', async () => {
    const answer = await provision(provisionBody('ZZZZ-ZZZZ-ZZZZ-ZZZZ'));
    expect(answer).toMatchObject({ status: 403, body: { error: 'provisioning_code_invalid' } });
  });

  it.each([
    ['the identity point (small order)', 'AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='],
    ['a non-canonical encoding', '7v///////////////////////////////////////38='],
  ])('refuses a device key that is %s, and the code stays usable', async (_label, key) => {
    const device = await newDevice();
    const answer = await provision(provisionBody(device.provisioning_code, { public_key: key }));
    expect(answer).toMatchObject({ status: 400, body: { error: 'invalid_field', field: 'public_key' } });
    expect((await provision(provisionBody(device.provisioning_code))).status).toBe(200);
  });

  it('refuses two objects with the same id', async () => {
    const device = await newDevice();
    const answer = await provision(
      provisionBody(device.provisioning_code, {
        objects: [
          { id: 'gate', label: 'A', kind: 'relay' },
          { id: 'gate', label: 'B', kind: 'relay' },
        ],
      }),
    );
    expect(answer).toMatchObject({ status: 400, body: { error: 'invalid_field', field: 'objects' } });
  });

  it('answers a malformed body with invalid_field, never a 500', async () => {
    for (const body of [{}, { code: 5 }, { code: 'x', public_key: 'x', objects: [], version: '1' }]) {
      const answer = await provision(body);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toBe('invalid_field');
    }
  });
});

describe('pairing', () => {
  async function provisioned() {
    const device = await newDevice();
    const answer = await provision(provisionBody(device.provisioning_code));
    return { deviceId: device.device_id, pairingCode: answer.body.pairing_code as string };
  }

  it('makes the barrier the customer’s, with its objects', async () => {
    const { deviceId, pairingCode } = await provisioned();
    const customer = await createCustomer(cloud.ctx, { displayName: 'Pia' });
    const paired = await pairDevice(cloud.ctx, { customerId: customer.id, pairingCode });
    expect(paired.device_id).toBe(deviceId);
    expect(paired.objects.map((object) => object.label)).toEqual(['Main gate', 'Side door']);
  });

  it('[attack:provisioning.code-reuse] works once: a second customer cannot take the barrier with the same code', async () => {
    const { pairingCode } = await provisioned();
    const first = await createCustomer(cloud.ctx, { displayName: 'First' });
    const second = await createCustomer(cloud.ctx, { displayName: 'Second' });
    await pairDevice(cloud.ctx, { customerId: first.id, pairingCode });
    await expect(pairDevice(cloud.ctx, { customerId: second.id, pairingCode })).rejects.toMatchObject({
      code: 'pairing_code_invalid',
    });
  });

  it('[attack:provisioning.code-reuse] expires after 24 hours', async () => {
    const { pairingCode } = await provisioned();
    clock.advance(24 * HOUR + 1000);
    const customer = await createCustomer(cloud.ctx, { displayName: 'Late' });
    await expect(pairDevice(cloud.ctx, { customerId: customer.id, pairingCode })).rejects.toMatchObject({
      code: 'pairing_code_invalid',
    });
  });
});
