import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { PROTOCOL_VERSION } from '../../shared/protocol/messages.js';
import type { ProvisionResponse } from '../../shared/protocol/provisioning.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import type { UpdateReport } from '../../shared/protocol/update-report.js';
import {
  signDeviceCall,
  type UpdateCommand,
  updateCommandSchema,
  verifyUpdateCommand,
} from '../../shared/protocol/updates.js';
import { RELEASE_MAX_BYTES, type ReleaseManifest, signManifest } from '../../shared/releases/manifest.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/wait-for.js';

/**
 * Releases and rollouts as the cloud runs them (docs/design.md section 12.4.2): signed uploads only, rollouts
 * to chosen controllers, update commands to online controllers, their reports, the halt on roll-backs, and
 * the signed download. The controllers here speak MQTT directly: the cloud's side is under test.
 */
const releaseKey = SigningKey.generate();
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
let database: TestDatabase;
let cloud: TestCloud;
const controllers: TestController[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock, env: { RELEASE_PUBLIC_KEY: releaseKey.publicKey.base64 } });
});

afterAll(async () => {
  for (const controller of controllers) await controller.client.endAsync(true);
  await cloud?.stop();
  await database?.close();
});

interface Bundle {
  bytes: Buffer;
  manifest: ReleaseManifest;
}

let versionSeq = 0;
function bundle(options: { size?: number; arch?: 'arm64' | 'x64'; version?: string } = {}): Bundle {
  versionSeq += 1;
  const bytes = randomBytes(options.size ?? 2.5 * 1024 * 1024);
  return {
    bytes,
    manifest: {
      v: 1,
      name: 'gatelink-device',
      version: options.version ?? `2.0.${versionSeq}`,
      arch: options.arch ?? 'arm64',
      node_abi: '115',
      sha256: createHash('sha256').update(bytes).digest('hex'),
      size: bytes.length,
      signed_at: clock.now().getTime(),
    },
  };
}

/** Uploads over real HTTP, as `gatelink-admin release upload` does. */
async function upload(body: Buffer, manifest: ReleaseManifest, key = releaseKey) {
  const header = Buffer.from(JSON.stringify(signManifest(key, manifest))).toString('base64');
  const response = await fetch(`${cloud.localUrl}/ops/releases`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${cloud.operatorToken}`,
      'content-type': 'application/gzip',
      'gatelink-release-manifest': header,
    },
    body: new Uint8Array(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function uploaded(made = bundle()): Promise<{ id: number; made: Bundle }> {
  const answer = await upload(made.bytes, made.manifest);
  expect(answer.status).toBe(201);
  return { id: (answer.body.release as { id: number }).id, made };
}

class TestController {
  readonly commands: UpdateCommand[] = [];
  constructor(
    readonly id: string,
    readonly key: SigningKey,
    readonly client: MqttClient,
  ) {}

  publishState(state: { online: boolean; version?: string; arch?: string; update?: UpdateReport }) {
    return this.client.publishAsync(
      deviceTopic('gatelink', this.id, 'state'),
      JSON.stringify({
        v: PROTOCOL_VERSION,
        device_id: this.id,
        at: clock.now().getTime(),
        version: '1.0.0',
        ...state,
      }),
      { qos: 1, retain: true },
    );
  }
}

/** A controller provisioned through the API, connected to the broker and reporting its arch. */
async function controller(arch = 'arm64', version = '1.0.0'): Promise<TestController> {
  const added = await cloud.ops('POST', '/ops/devices', { label: 'Gate' });
  const { provisioning_code } = added.body.device as { provisioning_code: string };
  const key = SigningKey.generate();
  const provisioned = await cloud.app.inject({
    method: 'POST',
    url: '/api/device/provision',
    payload: {
      code: provisioning_code,
      public_key: key.publicKey.base64,
      objects: [{ id: 'gate', label: 'Gate', kind: 'relay' }],
      version,
    },
  });
  expect(provisioned.statusCode, provisioned.body).toBe(200);
  const answer = provisioned.json() as ProvisionResponse;
  expect(answer.release_key).toBe(releaseKey.publicKey.base64);
  const client = await mqtt.connectAsync(answer.mqtt.url, {
    protocolVersion: 4,
    clientId: answer.device_id,
    username: answer.mqtt.username,
    password: answer.mqtt.password,
    reconnectPeriod: 0,
  });
  const made = new TestController(answer.device_id, key, client);
  client.on('message', (_topic, payload) => {
    const parsed = updateCommandSchema.safeParse(JSON.parse(payload.toString('utf8')));
    if (parsed.success && verifyUpdateCommand(cloud.ctx.serviceKey.publicKey, parsed.data)) {
      made.commands.push(parsed.data);
    }
  });
  await client.subscribeAsync(deviceTopic('gatelink', answer.device_id, 'cmd'), { qos: 1 });
  await made.publishState({ online: true, arch, version });
  await waitFor(async () => (await archOf(answer.device_id)) === arch, 'the arch to be stored');
  controllers.push(made);
  return made;
}

async function archOf(deviceId: string): Promise<string | null> {
  const row = await cloud.ctx.db
    .selectFrom('devices')
    .select('arch')
    .where('id', '=', deviceId)
    .executeTakeFirst();
  return row?.arch ?? null;
}

async function startRollout(body: Record<string, unknown>) {
  const answer = await cloud.ops('POST', '/ops/rollouts', body);
  expect(answer.status).toBe(201);
  return answer.body as { rollout: { id: number; targeted: number }; not_targeted: { device_id: string }[] };
}

async function rolloutDevices(id: number) {
  const answer = await cloud.ops('GET', `/ops/rollouts/${id}`);
  return answer.body as {
    rollout: { state: string; halted_reason: string | null; counts: Record<string, number> };
    devices: { device_id: string; state: string; reason: string | null }[];
  };
}

const report = (
  rollout: number,
  state: UpdateReport['state'],
  reason?: UpdateReport['reason'],
): UpdateReport => ({
  rollout_id: rollout,
  version: '2.0.0',
  state,
  ...(reason ? { reason } : {}),
  at: clock.now().getTime(),
});

describe('uploads', () => {
  it('stores a signed bundle and lists it', async () => {
    const { id, made } = await uploaded();
    const listed = await cloud.ops('GET', '/ops/releases');
    expect(listed.body.releases).toContainEqual(
      expect.objectContaining({ id, version: made.manifest.version, arch: 'arm64', size: made.bytes.length }),
    );
  });

  it('refuses a bundle signed by another key [attack:device.release-forged]', async () => {
    const made = bundle();
    const answer = await upload(made.bytes, made.manifest, SigningKey.generate());
    expect(answer).toMatchObject({ status: 422, body: { error: 'release_signature_invalid' } });
  });

  it('refuses a manifest altered after signing', async () => {
    const made = bundle();
    const header = signManifest(releaseKey, made.manifest);
    header.manifest.version = '9.9.9';
    const response = await fetch(`${cloud.localUrl}/ops/releases`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${cloud.operatorToken}`,
        'content-type': 'application/gzip',
        'gatelink-release-manifest': Buffer.from(JSON.stringify(header)).toString('base64'),
      },
      body: new Uint8Array(made.bytes),
    });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ error: 'release_signature_invalid' });
  });

  it('refuses bytes whose hash is not the manifest’s, and keeps nothing of them', async () => {
    const made = bundle();
    const other = Buffer.from(made.bytes);
    other[0] = (other[0] ?? 0) ^ 1;
    const answer = await upload(other, made.manifest);
    expect(answer).toMatchObject({ status: 422, body: { error: 'release_bundle_mismatch' } });
    const chunks = await cloud.ctx.db
      .selectFrom('release_chunks')
      .innerJoin('releases', 'releases.id', 'release_chunks.release_id')
      .select('seq')
      .where('releases.version', '=', made.manifest.version)
      .execute();
    expect(chunks).toEqual([]);
  });

  it('refuses more bytes than the manifest announced', async () => {
    const made = bundle({ size: 1000 });
    const answer = await upload(Buffer.concat([made.bytes, Buffer.from('x')]), made.manifest);
    expect(answer).toMatchObject({ status: 422, body: { error: 'release_bundle_mismatch' } });
  });

  it('refuses a body larger than a release may be', async () => {
    const made = bundle({ size: 10 });
    const header = Buffer.from(JSON.stringify(signManifest(releaseKey, made.manifest))).toString('base64');
    const status = await new Promise<number>((resolve, reject) => {
      const sent = httpRequest(`${cloud.localUrl}/ops/releases`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${cloud.operatorToken}`,
          'content-type': 'application/gzip',
          'content-length': String(RELEASE_MAX_BYTES + 1),
          'gatelink-release-manifest': header,
        },
      });
      sent.on('response', (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
        // The rest of the announced body is never sent.
        sent.destroy();
      });
      sent.on('error', reject);
      sent.write(made.bytes);
    });
    expect(status).toBe(413);
  });

  it('refuses the same version for the same arch twice, and takes it for another arch', async () => {
    const { made } = await uploaded();
    const again = await upload(made.bytes, made.manifest);
    expect(again).toMatchObject({ status: 409, body: { error: 'release_exists' } });
    const x64 = { ...made.manifest, arch: 'x64' as const };
    expect((await upload(made.bytes, x64)).status).toBe(201);
  });
});

describe('rollouts', () => {
  it('targets every provisioned controller of the release’s arch, and says which it left out', async () => {
    const arm = await controller('arm64');
    const x64 = await controller('x64');
    const { id } = await uploaded(bundle({ size: 100 }));
    const started = await startRollout({ release_id: id, target: 'all' });
    const { devices } = await rolloutDevices(started.rollout.id);
    expect(devices.map((device) => device.device_id)).toContain(arm.id);
    expect(devices.map((device) => device.device_id)).not.toContain(x64.id);
    expect(started.not_targeted.map((device) => device.device_id)).toContain(x64.id);
    await cloud.ops('POST', `/ops/rollouts/${started.rollout.id}/pause`);
  });

  it('targets named controllers only, and refuses an unknown one', async () => {
    const [a, b] = [await controller(), await controller()];
    const { id } = await uploaded(bundle({ size: 100 }));
    const started = await startRollout({ release_id: id, target: { devices: [a.id] } });
    const { devices } = await rolloutDevices(started.rollout.id);
    expect(devices.map((device) => device.device_id)).toEqual([a.id]);
    expect(devices.map((device) => device.device_id)).not.toContain(b.id);
    const unknown = await cloud.ops('POST', '/ops/rollouts', {
      release_id: id,
      target: { devices: ['D0000000000'] },
    });
    expect(unknown).toMatchObject({ status: 400, body: { error: 'invalid_field' } });
    await cloud.ops('POST', `/ops/rollouts/${started.rollout.id}/pause`);
  });

  it('takes a stable share of the fleet for a percentage', async () => {
    for (let i = 0; i < 6; i++) await controller();
    const { id } = await uploaded(bundle({ size: 100 }));
    const none = await startRollout({ release_id: id, target: { percent: 1 } });
    const all = await startRollout({ release_id: id, target: { percent: 100 } });
    const half = await startRollout({ release_id: id, target: { percent: 50 } });
    const fleet = all.rollout.targeted;
    expect(half.rollout.targeted).toBeLessThan(fleet);
    expect(none.rollout.targeted).toBeLessThan(half.rollout.targeted + 1);
    const first = (await rolloutDevices(half.rollout.id)).devices.map((d) => d.device_id);
    const again = (await rolloutDevices(half.rollout.id)).devices.map((d) => d.device_id);
    expect(again).toEqual(first);
    for (const rollout of [none, all, half])
      await cloud.ops('POST', `/ops/rollouts/${rollout.rollout.id}/pause`);
  });
});

describe('delivery and reports', () => {
  it('sends a signed update command to online controllers, nothing while paused, and applies their reports', async () => {
    const device = await controller();
    const { id } = await uploaded(bundle({ size: 100 }));
    const started = await startRollout({ release_id: id, target: { devices: [device.id] } });
    const rollout = started.rollout.id;
    await cloud.ops('POST', `/ops/rollouts/${rollout}/pause`);
    await cloud.controllerLink.updates.deliverDue();
    expect((await rolloutDevices(rollout)).devices[0]?.state).toBe('pending');

    await cloud.ops('POST', `/ops/rollouts/${rollout}/resume`);
    await cloud.controllerLink.updates.deliverDue();
    await waitFor(() => device.commands.length > 0, 'the update command');
    const command = device.commands[0];
    expect(command).toMatchObject({
      action: 'update',
      rollout_id: rollout,
      device_id: device.id,
      url: `${cloud.baseUrl}/api/device/releases/${id}/bundle`,
      allow_downgrade: false,
    });
    expect((await rolloutDevices(rollout)).devices[0]?.state).toBe('sent');

    await device.publishState({ online: true, arch: 'arm64', update: report(rollout, 'downloading') });
    await waitFor(
      async () => (await rolloutDevices(rollout)).devices[0]?.state === 'downloading',
      'downloading',
    );
    await device.publishState({ online: true, arch: 'arm64', update: report(rollout, 'healthy') });
    await waitFor(
      async () => (await rolloutDevices(rollout)).rollout.state === 'finished',
      'the rollout to finish',
    );
  });

  it('sends again to a controller that did not report for a while', async () => {
    const device = await controller();
    const { id } = await uploaded(bundle({ size: 100 }));
    const started = await startRollout({ release_id: id, target: { devices: [device.id] } });
    await cloud.controllerLink.updates.deliverDue();
    await waitFor(() => device.commands.length === 1, 'the first command');
    await cloud.controllerLink.updates.deliverDue();
    expect(device.commands).toHaveLength(1);
    clock.advance(6 * 60_000);
    await cloud.controllerLink.updates.deliverDue();
    await waitFor(() => device.commands.length === 2, 'the command again');
    expect(device.commands[1]?.rollout_id).toBe(started.rollout.id);
  });

  it('sends at once to a controller that comes online', async () => {
    const device = await controller();
    await device.publishState({ online: false, arch: 'arm64' });
    const { id } = await uploaded(bundle({ size: 100 }));
    await startRollout({ release_id: id, target: { devices: [device.id] } });
    await cloud.controllerLink.updates.deliverDue();
    expect(device.commands).toEqual([]);
    await device.publishState({ online: true, arch: 'arm64' });
    await waitFor(() => device.commands.length === 1, 'the command on coming online');
  });

  it('ignores a report for a rollout the controller is not in', async () => {
    const device = await controller();
    await device.publishState({
      online: true,
      arch: 'arm64',
      update: report(999_999, 'rolled_back', 'crashed'),
    });
    await device.publishState({ online: true, arch: 'x64' });
    await waitFor(async () => (await archOf(device.id)) === 'x64', 'the next state');
    const listed = await cloud.ops('GET', '/ops/devices');
    const row = (listed.body.devices as { id: string; update: unknown }[]).find((d) => d.id === device.id);
    expect(row?.update).toBeNull();
  });

  it('marks a controller already on the version healthy without a command', async () => {
    const made = bundle({ size: 100 });
    const device = await controller('arm64', made.manifest.version);
    const { id } = await uploaded(made);
    const started = await startRollout({ release_id: id, target: { devices: [device.id] } });
    await cloud.controllerLink.updates.deliverDue();
    expect((await rolloutDevices(started.rollout.id)).devices[0]?.state).toBe('healthy');
    expect(device.commands).toEqual([]);
  });

  it('halts itself when more than its share roll back, and sends nothing after', async () => {
    const devices = [await controller(), await controller(), await controller()];
    const { id } = await uploaded(bundle({ size: 100 }));
    const started = await startRollout({
      release_id: id,
      target: { devices: devices.map((d) => d.id) },
      max_rollback_share: 0.5,
    });
    const rollout = started.rollout.id;
    const [first, second] = devices;
    if (!first || !second) throw new Error('three controllers');
    await first.publishState({
      online: true,
      arch: 'arm64',
      update: report(rollout, 'rolled_back', 'crashed'),
    });
    await waitFor(
      async () => (await rolloutDevices(rollout)).rollout.counts.rolled_back === 1,
      'one roll-back',
    );
    expect((await rolloutDevices(rollout)).rollout.state).toBe('running');
    await second.publishState({
      online: true,
      arch: 'arm64',
      update: report(rollout, 'rolled_back', 'not_healthy'),
    });
    await waitFor(async () => (await rolloutDevices(rollout)).rollout.state === 'halted', 'the halt');
    const shown = await rolloutDevices(rollout);
    expect(shown.rollout.halted_reason).toContain('2 of 3');
    expect(shown.devices.find((d) => d.device_id === second.id)?.reason).toBe('not_healthy');
    expect((await cloud.ops('POST', `/ops/rollouts/${rollout}/resume`)).status).toBe(409);
    const before = devices.map((d) => d.commands.length);
    await cloud.controllerLink.updates.deliverDue();
    expect(devices.map((d) => d.commands.length)).toEqual(before);
    const metrics = await cloud.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${cloud.operatorToken}` },
    });
    expect(metrics.body).toContain('gatelink_rollouts_halted_total 1');
    expect(metrics.body).toMatch(/gatelink_update_reports_total\{state="rolled_back",reason="crashed"\} \d/);
  });
});

describe('download', () => {
  async function download(path: string, headers: Record<string, string>) {
    const response = await fetch(`${cloud.localUrl}${path}`, { headers });
    return {
      status: response.status,
      headers: response.headers,
      bytes: Buffer.from(await response.arrayBuffer()),
    };
  }

  it('serves the bundle to a controller that signs the call, and 401 otherwise', async () => {
    const device = await controller();
    const { id, made } = await uploaded();
    const path = `/api/device/releases/${id}/bundle`;
    const signed = (key: SigningKey, time = clock.now().getTime()) =>
      signDeviceCall(key, device.id, {
        method: 'GET',
        path,
        time,
        bodySha256: createHash('sha256').update('').digest('hex'),
      });
    expect((await download(path, {})).status).toBe(401);
    expect((await download(path, signed(SigningKey.generate()))).status).toBe(401);
    expect((await download(path, signed(device.key, clock.now().getTime() - 10 * 60_000))).status).toBe(401);
    const got = await download(path, signed(device.key));
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/gzip');
    expect(got.headers.get('content-length')).toBe(String(made.bytes.length));
    expect(got.bytes.equals(made.bytes)).toBe(true);
  });
});
