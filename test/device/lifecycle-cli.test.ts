import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { runProgram } from '../support/program-run.js';
import { tempDir } from './fixtures.js';

/**
 * The controller's side of its life (docs/design.md section 9.1), through the compiled `gatelink-device` against
 * a running cloud: the pairing code after provisioning and after it expired, `status` showing it (and what it
 * last heard once the cloud is gone), and `reset`.
 */
const BIN = resolve('bin/gatelink-device.mjs');
const OBJECTS =
  'objects:\n  - {id: gate, label: Main gate, kind: simulated, pulse_ms: 0}\nclock: {check: none}\n';

let database: TestDatabase;
let cloud: TestCloud;
let dir: string;
let cleanup: () => Promise<void>;
let configPath: string;
let stateDir: string;
let deviceId: string;

const device = (...args: string[]) =>
  runProgram([BIN, ...args, '--config', configPath], { cwd: dir, env: { ...process.env, NO_COLOR: '1' } });

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  ({ dir, cleanup } = await tempDir());
  configPath = join(dir, 'etc', 'device.yaml');
  stateDir = join(dir, 'etc', 'state');
  // As install.sh leaves the board: the state folder exists before provisioning.
  await mkdir(stateDir, { recursive: true });
  await writeFile(join(dir, 'objects.yaml'), OBJECTS);
  const added = await cloud.ops('POST', '/ops/devices', { label: 'Bench' });
  const created = added.body.device as { device_id: string; provisioning_code: string };
  deviceId = created.device_id;
  const provisioned = await runProgram(
    [
      BIN,
      'provision',
      '--cloud',
      cloud.localUrl,
      '--code',
      created.provisioning_code,
      '--config',
      configPath,
      '--objects-from',
      join(dir, 'objects.yaml'),
    ],
    { cwd: dir, env: process.env },
  );
  expect(provisioned.code, provisioned.stderr).toBe(0);
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
  await cleanup?.();
});

async function currentCode(): Promise<{ pairing_code: string | null; pairing_expires_at: Date | null }> {
  return cloud.ctx.db
    .selectFrom('devices')
    .select(['pairing_code', 'pairing_expires_at'])
    .where('id', '=', deviceId)
    .executeTakeFirstOrThrow();
}

describe('the pairing code on the controller', () => {
  it('prints the current code, then a fresh one once it has expired', async () => {
    const first = await device('pairing-code');
    expect(first.code, first.stderr).toBe(0);
    const code = (await currentCode()).pairing_code ?? '';
    const grouped = `${code.slice(0, 4)}-${code.slice(4)}`;
    expect(first.stdout).toContain(`Pairing code: ${grouped}`);
    expect(first.stdout).toContain('Add a barrier');

    // Expired as a day on the shelf leaves it: the board's clock and the cloud's stay in step.
    await cloud.ctx.db
      .updateTable('devices')
      .set({ pairing_expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', deviceId)
      .execute();
    const renewed = await device('pairing-code');
    expect(renewed.code).toBe(0);
    const fresh = (await currentCode()).pairing_code ?? '';
    expect(fresh).not.toBe(code);
    expect(renewed.stdout).toContain(`Pairing code: ${fresh.slice(0, 4)}-${fresh.slice(4)}`);
  });

  it('is shown by status while unpaired, and not once a customer added the controller', async () => {
    const unpaired = await device('status');
    const code = (await currentCode()).pairing_code ?? '';
    const grouped = `${code.slice(0, 4)}-${code.slice(4)}`;
    expect(unpaired.stdout).toMatch(new RegExp(`pairing code +${grouped}, valid until`));

    // The same controller with its cloud out of reach: status still answers, with the code it last heard.
    const offline = join(dir, 'etc', 'offline.yaml');
    const text = await readFile(configPath, 'utf8');
    await writeFile(offline, text.replace(/^cloud_url: .*$/m, 'cloud_url: http://127.0.0.1:1'));
    const unreached = await runProgram([BIN, 'status', '--config', offline], { cwd: dir, env: process.env });
    expect(unreached.code).toBe(unpaired.code);
    expect(unreached.stdout).toMatch(new RegExp(`pairing code +${grouped}, valid until .*cloud not reached`));

    const customer = await createCustomer(cloud.ctx, { displayName: 'Bench owner' });
    await pairDevice(cloud.ctx, { customerId: customer.id, pairingCode: code, name: 'Bench gate' });
    const paired = await device('pairing-code');
    expect(paired.code).toBe(0);
    expect(paired.stdout).toContain("is on a customer's account");
    expect((await device('status')).stdout).toMatch(/pairing +on a customer's account/);
  });
});

describe('reset', () => {
  it('refuses without a terminal or --yes, and refuses while the daemon runs', async () => {
    const asked = await device('reset');
    expect(asked.code).toBe(2);
    expect(asked.stderr).toContain('pass --yes');
    await writeFile(
      join(stateDir, 'status.json'),
      JSON.stringify({
        v: 1,
        running: true,
        pid: process.pid,
        device_id: deviceId,
        version: '0.0.0',
        started_at: Date.now(),
        updated_at: Date.now(),
        mqtt: { url: 'mqtt://127.0.0.1:1', connected: false, since: null, last_error: null },
        clock_synced: true,
        signal: null,
        modem: null,
        outbox: 0,
        last_command: null,
      }),
    );
    const running = await device('reset', '--yes');
    expect(running.code).toBe(1);
    expect(running.stderr).toContain('the daemon is running');
    expect(existsSync(configPath)).toBe(true);
  });

  it('deletes the key and the config and empties the state folder with --yes, and says what comes next', async () => {
    await writeFile(join(stateDir, 'status.json'), '{}');
    // The state folder is systemd's, in a parent the daemon's user cannot write: it is emptied, not removed.
    const reset = await device('reset', '--yes');
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toContain(`gatelink-admin device remove ${deviceId}`);
    expect(reset.stdout).toContain('gatelink-device provision');
    expect(existsSync(configPath)).toBe(false);
    expect(existsSync(join(dir, 'etc', 'device-key.pem'))).toBe(false);
    expect(readdirSync(stateDir)).toEqual([]);
  });
});
