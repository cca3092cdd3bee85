import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { latestMigration } from '../../cloud/admin/backup/postgres-tools.js';
import { MIGRATION_TABLES, openDatabase } from '../../cloud/foundation/db/database.js';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { provision } from '../../device/cli/provision.js';
import { loadConfig } from '../../device/config.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { Controller } from '../../device/runtime/controller.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { PREFIX } from '../support/broker-env.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { mosquittoAvailable, startMosquitto, type TestMosquitto } from '../support/mosquitto.js';
import { waitFor } from '../support/wait-for.js';
import { checkOutPreviousRelease, type PreviousRelease } from './previous-release.js';
import {
  createEmptyDatabase,
  type EmptyDatabase,
  POSTGRES_SERVER,
  postgresReachable,
} from './server-database.js';

/**
 * A rolling upgrade (deploy/README.md, "Upgrades"; docs/design.md section 8.2): the previous release serves
 * on PostgreSQL with an external broker; this release starts on the same database and migrates it while the
 * previous one goes on answering; then both answer a company's `status` and open the same gate.
 */
const previous = await checkOutPreviousRelease();
const reachable = await postgresReachable();
const skipReason =
  typeof previous === 'string'
    ? previous
    : !reachable
      ? `no PostgreSQL at ${POSTGRES_SERVER} (apt-get install postgresql)`
      : !mosquittoAvailable
        ? 'no Mosquitto (apt-get install mosquitto)'
        : null;
if (skipReason) console.warn(`rolling-upgrade: skipped, ${skipReason}`);

const OBJECTS =
  'objects:\n  - id: gate\n    label: Main gate\n    kind: simulated\n    pulse_ms: 0\nclock:\n  check: none\n';

/** The previous release's cloud, from its own checkout, configured by environment as an operator does. */
async function startPreviousCloud(release: PreviousRelease, env: Record<string, string>) {
  const {
    DATABASE_URL: _db,
    MQTT_URL: _mqtt,
    OPERATOR_TOKEN: _token,
    BASE_URL: _base,
    ...rest
  } = process.env;
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'cloud/main.ts'], {
    cwd: release.folder,
    env: { ...rest, PORT: '0', MQTT_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = once(child, 'exit');
  const baseUrl = await new Promise<string>((done, fail) => {
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /listening at (\S+)/.exec(output);
      if (found?.[1] && /MQTT for devices/.test(output)) done(found[1].replace('localhost', '127.0.0.1'));
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    void exited.then(([code]) => fail(new Error(`the previous release exited with ${code}:\n${output}`)));
  });
  return {
    baseUrl,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The newest migration a checkout holds, where its release keeps them (the folder moved once). */
function newestMigration(root: string): string {
  const folder = ['cloud/foundation/db/migrations', 'cloud/db/migrations']
    .map((path) => join(root, path))
    .find((path) => existsSync(path));
  const names = folder ? readdirSync(folder).filter((name) => /^\d{4}-.*\.ts$/.test(name)) : [];
  return names.sort().at(-1)?.replace(/\.ts$/, '') ?? 'none';
}

async function post(baseUrl: string, path: string, body: unknown, token?: string) {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe.skipIf(skipReason !== null)('a rolling upgrade on one PostgreSQL', () => {
  const release = previous as PreviousRelease;
  const token = `glop_${'r'.repeat(40)}`;
  let folder: string;
  let database: EmptyDatabase;
  let mosquitto: TestMosquitto;
  let old: Awaited<ReturnType<typeof startPreviousCloud>>;
  let current: TestCloud | undefined;
  let controller: Controller | undefined;
  let company: { org_id: number; secret: string };
  let requestCode: string;
  let numberId: number;
  let deviceId: string;
  let configPath: string;
  let pairingCode: string;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'gatelink-rolling-'));
    database = await createEmptyDatabase();
    mosquitto = await startMosquitto(PREFIX);
    const keyFile = join(folder, 'signing-key.pem');
    await writeFile(keyFile, SigningKey.generate().toPem(), { mode: 0o600 });
    old = await startPreviousCloud(release, {
      DATABASE_URL: database.url,
      MQTT_URL: mosquitto.cloudUrl,
      MQTT_PUBLIC_URL: mosquitto.deviceUrl,
      MQTT_TOPIC_PREFIX: PREFIX,
      MQTT_CLIENT_ID: 'gatelink-previous',
      SIGNING_KEY_FILE: keyFile,
      OPERATOR_TOKEN: token,
      GATELINK_DATA_DIR: join(folder, 'previous-data'),
    });
    const created = await post(old.baseUrl, '/ops/companies', { name: 'Rolling Couriers' }, token);
    const companyId = (created.body.company as { id: number }).id;
    await post(old.baseUrl, `/ops/companies/${companyId}/approve`, {}, token);
    const secret = (await post(old.baseUrl, `/ops/companies/${companyId}/secret`, {}, token)).body
      .secret as string;
    company = { org_id: companyId, secret };
    const device = (await post(old.baseUrl, '/ops/devices', { label: 'Yard' }, token)).body.device as {
      device_id: string;
      provisioning_code: string;
    };
    await writeFile(join(folder, 'objects.yaml'), OBJECTS);
    configPath = join(folder, 'device.yaml');
    const provisioned = await provision({
      cloud: old.baseUrl,
      code: device.provisioning_code,
      configPath,
      objectsFrom: join(folder, 'objects.yaml'),
    });
    deviceId = device.device_id;
    numberId = provisioned.response.numbers[0]!.number_id;
    requestCode = (await post(old.baseUrl, '/api/company.php?a=request', company)).body.code as string;
    const config = loadConfig(configPath);
    const driver = new SimulatedDriver({ objects: config.objects.filter((o) => o.kind === 'simulated') });
    controller = new Controller(config, {
      drivers: { simulated: driver },
      reconnectMinMs: 50,
      log: () => {},
    });
    await controller.start();
    pairingCode = provisioned.response.pairing_code!;
  });

  afterAll(async () => {
    await controller?.stop();
    await current?.stop();
    await old?.stop();
    await mosquitto?.stop();
    await database?.drop();
    await release.remove();
    await rm(folder, { recursive: true, force: true });
  });

  it('keeps the previous release answering while this one migrates, then both open the gate', async () => {
    // The previous release answers status calls the whole time this release starts and migrates.
    expect(await latestMigration(database.url, MIGRATION_TABLES.migrations)).toBe(
      newestMigration(release.folder),
    );
    let starting = true;
    const answersWhileStarting: number[] = [];
    const polling = (async () => {
      while (starting) {
        answersWhileStarting.push(
          (await post(old.baseUrl, '/api/company.php?a=status', { ...company, code: requestCode })).status,
        );
      }
    })();
    const handle = await openDatabase({ url: database.url });
    current = await startTestCloud({
      database: handle,
      env: {
        DATABASE_URL: database.url,
        MQTT_URL: mosquitto.cloudUrl,
        MQTT_PUBLIC_URL: mosquitto.deviceUrl,
        MQTT_TOPIC_PREFIX: PREFIX,
        MQTT_CLIENT_ID: 'gatelink-current',
        SIGNING_KEY_FILE: join(folder, 'signing-key.pem'),
        OPERATOR_TOKEN: token,
      },
    });
    starting = false;
    await polling;
    expect(await latestMigration(database.url, MIGRATION_TABLES.migrations)).toBe(
      newestMigration(join(import.meta.dirname, '../..')),
    );
    expect(answersWhileStarting.length).toBeGreaterThan(0);
    expect(answersWhileStarting.every((status) => status === 200)).toBe(true);

    // The customer pairs the gate and grants the company a key, through this release.
    const ctx = current.ctx;
    const customerId = (await createCustomer(ctx, { displayName: 'Rolling Customer' })).id;
    await pairDevice(ctx, { customerId, pairingCode });
    await claimRequest(ctx, { code: requestCode, customerId });
    const { keyRef } = await issueAccessKey(ctx, {
      code: requestCode,
      customerId,
      deviceId,
      objectIds: [numberId],
      keyExpiresAt: null,
    });
    await waitFor(async () => {
      const devices = (await current!.ops('GET', '/ops/devices')).body.devices as {
        id: string;
        online: boolean;
      }[];
      return devices.find((d) => d.id === deviceId)?.online === true;
    }, 'the controller to be online');

    const open = { ...company, key_ref: keyRef, number_id: numberId, actor: 'Driver' };
    const oldStatus = await post(old.baseUrl, '/api/company.php?a=status', { ...company, code: requestCode });
    expect(oldStatus.body).toMatchObject({ key_ref: keyRef });
    expect((await current.call('status', { ...company, code: requestCode })).body).toMatchObject({
      key_ref: keyRef,
    });
    expect((await post(old.baseUrl, '/api/company.php?a=open', open)).body).toMatchObject({ ok: 1 });
    expect((await current.call('open', open)).body).toMatchObject({ ok: 1 });
  });
});
