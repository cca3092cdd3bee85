import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../cloud/foundation/db/database.js';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { webhookHeaders } from '../../cloud/rules/events/webhook-message.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { verifyWebhook } from '../../company/client/webhook-verification.js';
import type { Controller } from '../../device/runtime/controller.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { runProgram } from '../support/program-run.js';
import { provisionedConfig, startSimulatedController } from '../support/provisioned-gate.js';
import {
  createEmptyDatabase,
  type EmptyDatabase,
  POSTGRES_SERVER,
  postgresReachable,
} from './server-database.js';

/**
 * A backup restored elsewhere is the same service (deploy/README.md, "Backups"): after `gatelink-admin backup`
 * and `restore` into a fresh database and data folder, a cloud started there publishes the same service key,
 * the controller provisioned before connects with the credentials it has and obeys the command it signs, the
 * company opens with the access key it was granted, and a webhook verifies with the key it fetched before.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const reachable = await postgresReachable();
if (!reachable)
  console.warn(`backup-restore: skipped, no PostgreSQL at ${POSTGRES_SERVER} (apt-get install postgresql)`);

const OBJECTS =
  'objects:\n  - id: gate\n    label: Main gate\n    kind: simulated\n    pulse_ms: 0\nclock:\n  check: none\n';

function admin(args: string[], env: Record<string, string>) {
  // The test runner sets BASE_URL for its own purposes; the admin tool would read it as the cloud's address.
  const {
    DATABASE_URL: _db,
    OPERATOR_TOKEN: _token,
    SIGNING_KEY_FILE: _key,
    BASE_URL: _base,
    MQTT_URL: _mqtt,
    ...rest
  } = process.env;
  return runProgram(['--import', 'tsx', 'cloud/admin/main.ts', ...args], {
    cwd: ROOT,
    env: { ...rest, LOG_LEVEL: 'silent', ...env },
  });
}

async function publishedKey(cloud: TestCloud): Promise<string> {
  const answer = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
  return (JSON.parse(answer.body) as { key: string }).key;
}

describe.skipIf(!reachable)('a backup restored into a fresh database and data folder', () => {
  const folders: string[] = [];
  const databases: EmptyDatabase[] = [];
  let before: { cloud: TestCloud; controller: Controller; close(): Promise<void> } | undefined;
  let company: { org_id: number; secret: string };
  let keyRef: number;
  let numberId: number;
  let configPath: string;
  let mqttPort: string;
  let keyBefore: string;
  let backupFolder: string;

  const folder = async (name: string) => {
    const made = await mkdtemp(join(tmpdir(), `gatelink-${name}-`));
    folders.push(made);
    return made;
  };

  beforeAll(async () => {
    const original = await createEmptyDatabase();
    databases.push(original);
    const database = await openDatabase({ url: original.url });
    const cloud = await startTestCloud({ database });
    const gate = await provisionedConfig(cloud, OBJECTS);
    folders.push(gate.dir);
    configPath = gate.configPath;
    numberId = gate.numberOf('gate');
    const customerId = (await createCustomer(cloud.ctx, { displayName: 'Ada' })).id;
    await pairDevice(cloud.ctx, { customerId, pairingCode: gate.response.pairing_code! });
    company = await secretCompany(cloud, 'Couriers');
    const code = (await cloud.call('request', company)).body.code as string;
    await claimRequest(cloud.ctx, { code, customerId });
    keyRef = (
      await issueAccessKey(cloud.ctx, {
        code,
        customerId,
        deviceId: gate.response.device_id,
        objectIds: [numberId],
        keyExpiresAt: null,
      })
    ).keyRef;
    const { controller } = await startSimulatedController(cloud, configPath);
    mqttPort = new URL(cloud.controllerLink.deviceUrl).port;
    keyBefore = await publishedKey(cloud);
    before = {
      cloud,
      controller,
      close: async () => {
        await cloud.stop();
        await database.close();
      },
    };
    const opened = await cloud.call('open', {
      ...company,
      key_ref: keyRef,
      number_id: numberId,
      actor: 'Driver',
    });
    expect(opened.body).toMatchObject({ ok: 1 });

    backupFolder = join(await folder('backup'), 'nightly');
    const backup = await admin(['backup', backupFolder], {
      DATABASE_URL: original.url,
      GATELINK_DATA_DIR: cloud.dataDir,
      SIGNING_KEY_FILE: cloud.ctx.config.serviceKeyFile,
    });
    expect(backup.stderr).toBe('');
    expect(backup.code).toBe(0);
    expect(backup.stdout).toContain(`service key   ${cloud.ctx.serviceKey.publicKey.fingerprint}`);
    expect(backup.stdout).toContain('VAPID key     file');
  });

  afterAll(async () => {
    await before?.controller.stop();
    await before?.close();
    for (const database of databases) await database.drop();
    for (const made of folders) await rm(made, { recursive: true, force: true });
  });

  it('keeps the database, the service key, the VAPID key and the operator token, each readable by its owner alone', async () => {
    const names = (await readdir(backupFolder)).sort();
    expect(names).toEqual([
      'database.pgdump',
      'manifest.json',
      'operator-token',
      'signing-key.pem',
      'vapid-key.pem',
    ]);
    for (const name of names) expect((await stat(join(backupFolder, name))).mode & 0o777).toBe(0o600);
    expect((await stat(backupFolder)).mode & 0o777).toBe(0o700);
  });

  it('restores into a new cloud that the same controller and company use as before', async () => {
    await before!.controller.stop();
    await before!.close();
    before = undefined;
    const fresh = await createEmptyDatabase();
    databases.push(fresh);
    const dataDir = await folder('restored');
    const restored = await admin(['restore', backupFolder], {
      DATABASE_URL: fresh.url,
      GATELINK_DATA_DIR: dataDir,
    });
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);

    const database = await openDatabase({ url: fresh.url });
    const cloud = await startTestCloud({
      database,
      env: { SIGNING_KEY_FILE: join(dataDir, 'signing-key.pem'), MQTT_PORT: mqttPort },
    });
    try {
      expect(await publishedKey(cloud)).toBe(keyBefore);
      const { controller } = await startSimulatedController(cloud, configPath);
      try {
        const opened = await cloud.call('open', {
          ...company,
          key_ref: keyRef,
          number_id: numberId,
          actor: 'Driver',
        });
        expect(opened.body).toMatchObject({ ok: 1 });
      } finally {
        await controller.stop();
      }
      const body = JSON.stringify({
        type: 'key.revoked',
        id: 'evt_1',
        at: new Date().toISOString(),
        data: {},
      });
      const headers = webhookHeaders(cloud.ctx.serviceKey, {
        id: 'evt_1',
        timestamp: Math.floor(Date.now() / 1000),
        body,
      });
      expect(verifyWebhook({ headers, body, publicKey: keyBefore }).id).toBe('evt_1');
    } finally {
      await cloud.stop();
      await database.close();
    }
  });

  it('refuses to restore over a database with tables, or over a service key, saying which', async () => {
    const used = databases[0]!;
    const dataDir = await folder('taken');
    const overDatabase = await admin(['restore', backupFolder], {
      DATABASE_URL: used.url,
      GATELINK_DATA_DIR: dataDir,
    });
    expect(overDatabase.code).toBe(1);
    expect(overDatabase.stderr).toMatch(
      /^gatelink-admin: the database of DATABASE_URL is not empty \(\d+ tables\)/,
    );
    const fresh = await createEmptyDatabase();
    databases.push(fresh);
    const keyed = await folder('keyed');
    const first = await admin(['restore', backupFolder], {
      DATABASE_URL: fresh.url,
      GATELINK_DATA_DIR: keyed,
    });
    expect(first.code).toBe(0);
    const second = await createEmptyDatabase();
    databases.push(second);
    const overKey = await admin(['restore', backupFolder], {
      DATABASE_URL: second.url,
      GATELINK_DATA_DIR: keyed,
    });
    expect(overKey.code).toBe(1);
    expect(overKey.stderr).toContain(`a service key is already at ${join(keyed, 'signing-key.pem')}`);
  });
});
