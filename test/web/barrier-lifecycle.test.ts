import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { signDeviceCall } from '../../shared/protocol/updates.js';
import { type BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { companyRequest, companyStatus, type SecretAuth, signedInCustomer } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { FakeDevice } from '../support/fake-device.js';

/**
 * A barrier's life after pairing (docs/design.md section 9.1): the controller's pairing code, removing a
 * barrier and handing it over, replacing a broken controller, and the operator's side of both.
 */
const DAY = 24 * 3600 * 1000;
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;
let company: SecretAuth;
const devices: FakeDevice[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock });
  company = await secretCompany(cloud, 'Parcel Express');
});

afterAll(async () => {
  for (const device of devices) await device.client.endAsync();
  await cloud?.stop();
  await database?.close();
});

const text = visibleText;

interface Controller {
  deviceId: string;
  pairingCode: string;
  password: string;
  key: SigningKey;
}

async function provisionedController(objects: { id: string; label: string }[]): Promise<Controller> {
  const added = await cloud.ops('POST', '/ops/devices', { label: 'Installer: yard' });
  const { device_id, provisioning_code } = added.body.device as {
    device_id: string;
    provisioning_code: string;
  };
  const key = SigningKey.generate();
  const response = await cloud.app.inject({
    method: 'POST',
    url: '/api/device/provision',
    payload: {
      code: provisioning_code,
      public_key: key.publicKey.base64,
      objects: objects.map((object) => ({ ...object, kind: 'relay' })),
      version: '0.1.0',
    },
  });
  const body = response.json() as { pairing_code: string; mqtt: { password: string } };
  return { deviceId: device_id, pairingCode: body.pairing_code, password: body.mqtt.password, key };
}

/** The controller's own signed call for its pairing code. */
async function askPairingCode(
  controller: { deviceId: string; key: SigningKey },
  options: { signedPath?: string } = {},
) {
  const headers = signDeviceCall(controller.key, controller.deviceId, {
    method: 'POST',
    path: options.signedPath ?? '/api/device/pairing-code',
    time: clock.now().getTime(),
    bodySha256: createHash('sha256').update('').digest('hex'),
  });
  const response = await cloud.app.inject({ method: 'POST', url: '/api/device/pairing-code', headers });
  return { status: response.statusCode, body: response.json() as Record<string, unknown> };
}

async function pair(client: BrowserClient, code: string, name: string) {
  await client.get('/barriers');
  return client.post('/barriers', { code, name });
}

async function grantedKey(customerId: number, deviceId: string, numberIds: number[]) {
  const code = await companyRequest(cloud, company);
  await claimRequest(cloud.ctx, { code, customerId });
  const { keyRef } = await issueAccessKey(cloud.ctx, {
    code,
    customerId,
    deviceId,
    objectIds: numberIds,
    keyExpiresAt: null,
  });
  return { code, keyRef };
}

async function numbersOf(deviceId: string) {
  return cloud.ctx.db
    .selectFrom('device_objects')
    .select(['id', 'label'])
    .where('device_id', '=', deviceId)
    .where('removed_at', 'is', null)
    .orderBy('id')
    .execute();
}

async function revokedEvents(code: string) {
  const rows = await cloud.ctx.db
    .selectFrom('events')
    .select('data')
    .where('type', '=', 'request.revoked')
    .execute();
  return rows.filter((row) => JSON.stringify(row.data).includes(code)).length;
}

describe('the pairing code a controller asks for', () => {
  it('is the current code while unpaired, a fresh one after it expired, and none once paired', async () => {
    const controller = await provisionedController([{ id: 'gate', label: 'Main gate' }]);
    const first = await askPairingCode(controller);
    expect(first.body).toMatchObject({ paired: false, pairing_code: controller.pairingCode });

    clock.advance(DAY + 1000);
    const renewed = await askPairingCode(controller);
    expect(renewed.status).toBe(200);
    expect(renewed.body.pairing_code).not.toBe(controller.pairingCode);
    expect(new Date(renewed.body.pairing_expires_at as string).getTime()).toBe(clock.now().getTime() + DAY);

    const { client } = await signedInCustomer(cloud, 'Shelf Sam');
    const stale = await pair(client, controller.pairingCode, 'Yard');
    expect(stale.status).toBe(403);
    const paired = await pair(client, renewed.body.pairing_code as string, 'Yard');
    expect(paired.status, text(paired.html)).toBe(303);
    expect((await askPairingCode(controller)).body).toEqual({
      paired: true,
      pairing_code: null,
      pairing_expires_at: null,
    });
  });

  it("refuses a call signed with another controller's key, and one signed for another path [attack:device.pairing-code-forged]", async () => {
    const controller = await provisionedController([{ id: 'gate', label: 'Main gate' }]);
    const other = await provisionedController([{ id: 'gate', label: 'Main gate' }]);
    const forged = await askPairingCode({ deviceId: controller.deviceId, key: other.key });
    expect({ status: forged.status, error: forged.body.error }).toEqual({
      status: 401,
      error: 'device_auth_failed',
    });
    const replayed = await askPairingCode(controller, { signedPath: '/api/device/releases/1/bundle' });
    expect(replayed.status).toBe(401);
  });

  it('is issued by the operator for an unpaired controller only', async () => {
    const controller = await provisionedController([{ id: 'gate', label: 'Main gate' }]);
    const issued = await cloud.ops('POST', `/ops/devices/${controller.deviceId}/pairing-code`);
    expect(issued.body.pairing_code).toBe(controller.pairingCode);
    const { client } = await signedInCustomer(cloud, 'Opal');
    await pair(client, controller.pairingCode, 'Yard');
    const refused = await cloud.ops('POST', `/ops/devices/${controller.deviceId}/pairing-code`);
    expect(refused.status).toBe(409);
  });
});

describe('removing a barrier and handing it over', () => {
  it("ends every key with its event, and the next owner pairs it and sees none of the previous owner's journal", async () => {
    const controller = await provisionedController([{ id: 'gate', label: 'Main gate' }]);
    const first = await signedInCustomer(cloud, 'First Fiona');
    await pair(first.client, controller.pairingCode, 'Old yard');
    const [gate] = await numbersOf(controller.deviceId);
    const key = await grantedKey(first.id, controller.deviceId, [gate!.id]);
    const refusedOpen = await cloud.call('open', {
      ...company,
      key_ref: key.keyRef,
      number_id: gate!.id,
      actor: 'Ann',
    });
    expect(refusedOpen.status).toBe(503);
    expect(text((await first.client.get(`/barriers/${controller.deviceId}/journal`)).html)).toContain('Ann');

    const page = await first.client.get(`/barriers/${controller.deviceId}`);
    expect(page.html).toContain('data-confirm="Remove Old yard from your account?');
    const removed = await first.client.post(`/barriers/${controller.deviceId}/remove`, {});
    expect(removed.status).toBe(303);
    const after = text((await first.client.get(removed.location!)).html);
    expect(after).toContain('Barrier removed from your account');
    expect(after).toContain('gatelink-device pairing-code');
    expect(after).not.toContain('Old yard');
    expect((await first.client.get(`/barriers/${controller.deviceId}`)).status).toBe(404);
    expect((await companyStatus(cloud, company, key.code)).body.state).toBe('revoked');
    expect(await revokedEvents(key.code)).toBe(1);
    const open = await cloud.call('open', {
      ...company,
      key_ref: key.keyRef,
      number_id: gate!.id,
      actor: 'Ann',
    });
    expect(open.body.error).toBe('revoked');

    const renewed = await askPairingCode(controller);
    expect(renewed.body.paired).toBe(false);
    const second = await signedInCustomer(cloud, 'Second Sid');
    const paired = await pair(second.client, renewed.body.pairing_code as string, 'New yard');
    expect(paired.status).toBe(303);
    const journal = text((await second.client.get(`/barriers/${controller.deviceId}/journal`)).html);
    expect(journal).not.toContain('Ann');
    expect(text((await second.client.get(`/barriers/${controller.deviceId}`)).html)).toContain('New yard');
    expect(text((await first.client.get('/barriers')).html)).not.toContain('yard');
  });

  it("answers another customer's removal and replacement with 404, changing nothing [attack:web.other-customer-urls] [attack:web.replace-with-foreign-controller]", async () => {
    const controller = await provisionedController([{ id: 'gate', label: 'Main gate' }]);
    const owner = await signedInCustomer(cloud, 'Owner Olga');
    await pair(owner.client, controller.pairingCode, 'Olga gate');
    const stranger = await signedInCustomer(cloud, 'Stranger Stan');
    await stranger.client.get('/barriers');
    expect((await stranger.client.post(`/barriers/${controller.deviceId}/remove`, {})).status).toBe(404);
    const spare = await provisionedController([{ id: 'gate', label: 'Main gate' }]);
    const replaced = await stranger.client.post(`/barriers/${controller.deviceId}/replace`, {
      new_code: spare.pairingCode,
    });
    expect(replaced.status).toBe(404);
    expect(text((await owner.client.get(`/barriers/${controller.deviceId}`)).html)).toContain('Olga gate');
  });
});

describe('replacing a broken controller', () => {
  it('keeps the name, the keys with their number_ids, and the journal; companies open the new controller [attack:web.replace-with-foreign-controller] [attack:device.retired-controller]', async () => {
    const old = await provisionedController([
      { id: 'gate', label: 'Main gate' },
      { id: 'door', label: 'Side door' },
    ]);
    const owner = await signedInCustomer(cloud, 'Rita Replace');
    await pair(owner.client, old.pairingCode, 'Warehouse');
    const [gate, door] = await numbersOf(old.deviceId);
    const both = await grantedKey(owner.id, old.deviceId, [gate!.id, door!.id]);
    const doorOnly = await grantedKey(owner.id, old.deviceId, [door!.id]);
    await cloud.call('open', { ...company, key_ref: both.keyRef, number_id: gate!.id, actor: 'Before Bea' });

    const fresh = await provisionedController([{ id: 'relay-1', label: 'Main gate' }]);
    const other = await signedInCustomer(cloud, 'Other Otto');
    const othersController = await provisionedController([{ id: 'gate', label: 'Main gate' }]);
    await pair(other.client, othersController.pairingCode, 'Otto gate');
    const taken = await owner.client.post(`/barriers/${old.deviceId}/replace`, {
      new_code: othersController.pairingCode,
    });
    expect(taken.status).toBe(403);
    expect(text(taken.html)).toContain('pairing code is unknown');

    const replaced = await owner.client.post(`/barriers/${old.deviceId}/replace`, {
      new_code: fresh.pairingCode,
    });
    expect(replaced.status, text(replaced.html)).toBe(303);
    expect(replaced.location).toBe(`/barriers/${fresh.deviceId}?replaced=1`);
    const page = text((await owner.client.get(replaced.location!)).html);
    expect(page).toContain('Controller replaced');
    expect(page).toContain('Warehouse');
    expect(page).toContain('May open: Main gate');
    expect((await owner.client.get(`/barriers/${old.deviceId}`)).status).toBe(404);
    const journal = text((await owner.client.get(`/barriers/${fresh.deviceId}/journal`)).html);
    expect(journal).toContain('Before Bea');

    expect((await companyStatus(cloud, company, both.code)).body.state).toBe('issued');
    expect((await companyStatus(cloud, company, doorOnly.code)).body.state).toBe('revoked');
    expect(await revokedEvents(doorOnly.code)).toBe(1);

    const device = await FakeDevice.connect(
      cloud.controllerLink.deviceUrl,
      { id: fresh.deviceId, password: fresh.password, key: fresh.key },
      { prefix: cloud.ctx.config.topicPrefix, cloudKey: cloud.ctx.serviceKey.publicKey },
    );
    devices.push(device);
    await expect
      .poll(async () => text((await owner.client.get(`/barriers/${fresh.deviceId}`)).html))
      .toContain('Online');
    const opening = cloud.call('open', {
      ...company,
      key_ref: both.keyRef,
      number_id: gate!.id,
      actor: 'After Al',
    });
    const command = await device.nextCommand();
    expect(command.object).toBe('relay-1');
    await device.ack(command);
    expect((await opening).status).toBe(200);

    const oldRow = await cloud.ctx.db
      .selectFrom('devices')
      .select(['customer_id', 'public_key', 'mqtt_password_hash', 'provisioned_at'])
      .where('id', '=', old.deviceId)
      .executeTakeFirstOrThrow();
    expect(oldRow).toEqual({
      customer_id: null,
      public_key: null,
      mqtt_password_hash: null,
      provisioned_at: null,
    });
    expect((await askPairingCode(old)).status).toBe(401);
  });

  it('is done by the operator by ids, and a retired record is kept for its journal or deleted when unused', async () => {
    const old = await provisionedController([{ id: 'gate', label: 'Main gate' }]);
    const owner = await signedInCustomer(cloud, 'Ivan Installer');
    await pair(owner.client, old.pairingCode, 'Depot');
    const [gate] = await numbersOf(old.deviceId);
    const key = await grantedKey(owner.id, old.deviceId, [gate!.id]);
    const fresh = await provisionedController([{ id: 'gate', label: 'Main gate' }]);
    const moved = await cloud.ops('POST', `/ops/devices/${old.deviceId}/replace`, {
      new_device: fresh.deviceId,
    });
    expect(moved.body).toEqual({
      old_device: old.deviceId,
      new_device: fresh.deviceId,
      carried_objects: ['Main gate'],
      revoked_keys: 0,
    });
    expect(text((await owner.client.get(`/barriers/${fresh.deviceId}`)).html)).toContain('Depot');
    const again = await cloud.ops('POST', `/ops/devices/${old.deviceId}/replace`, {
      new_device: fresh.deviceId,
    });
    expect(again.status).toBe(404);

    const retired = await cloud.ops('POST', `/ops/devices/${fresh.deviceId}/remove`);
    expect(retired.body).toEqual({ device_id: fresh.deviceId, revoked_keys: 1, deleted: false });
    expect((await companyStatus(cloud, company, key.code)).body.state).toBe('revoked');
    expect((await owner.client.get(`/barriers/${fresh.deviceId}`)).status).toBe(404);

    const unused = await provisionedController([{ id: 'gate', label: 'Main gate' }]);
    const deleted = await cloud.ops('POST', `/ops/devices/${unused.deviceId}/remove`);
    expect(deleted.body).toEqual({ device_id: unused.deviceId, revoked_keys: 0, deleted: true });
    expect((await cloud.ops('POST', `/ops/devices/${unused.deviceId}/remove`)).status).toBe(404);
  });
});
