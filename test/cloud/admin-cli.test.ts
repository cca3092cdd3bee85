import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import type { ProvisionResponse } from '../../shared/protocol/provisioning.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';
import { freePort } from '../support/ports.js';
import { type ProgramRun, runProgram } from '../support/program-run.js';

/**
 * The operator API under /ops/ and its command line, `gatelink-admin`, run as operators run it: a separate
 * process talking HTTP to a cloud listening on a real port.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const ADMIN = resolve(ROOT, 'bin/gatelink-admin.mjs');

let keyFiles: KeyFileServer;
let database: TestDatabase;
let cloud: TestCloud;

beforeAll(async () => {
  keyFiles = new KeyFileServer();
  await keyFiles.start();
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
  await keyFiles?.stop();
});

/** Runs `gatelink-admin` with the test cloud's address and token unless told otherwise. */
function admin(args: string[], connection: { url?: string; token?: string } = {}): Promise<ProgramRun> {
  const { OPERATOR_TOKEN: _token, GATELINK_URL: _url, ...env } = process.env;
  const argv = [
    ADMIN,
    '--url',
    connection.url ?? cloud.baseUrl,
    '--token',
    connection.token ?? cloud.operatorToken,
    ...args,
  ];
  return runProgram(argv, { cwd: ROOT, env });
}

function json(run: ProgramRun): Record<string, unknown> {
  expect(run, run.stderr).toMatchObject({ code: 0 });
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}

/** A company made and read through the operator API directly (the CLI's own runs are counted). */
async function addCompany(body: { name: string; domain?: string }): Promise<number> {
  const answer = await cloud.ops('POST', '/ops/companies', body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return (answer.body.company as { id: number }).id;
}

async function companyOf(id: number) {
  const answer = await cloud.ops('GET', `/ops/companies/${id}`);
  return answer.body.company as { status: string; key: string | null };
}

describe('the operator API', () => {
  it('[attack:operator.no-token] answers 401 unauthorized without the token or with a wrong one, and changes nothing', async () => {
    const url = `${cloud.baseUrl}/ops/devices`;
    const none = await fetch(url);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: 'unauthorized' });

    const wrong = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${cloud.operatorToken}x`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'Intruder' }),
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: 'unauthorized' });
    expect((await cloud.ops('GET', '/ops/devices')).body.devices).toEqual([]);
  });
});

describe('gatelink-admin', () => {
  let secretCompanyId: number;
  let device: { device_id: string; provisioning_code: string };
  let provisioned: ProvisionResponse;

  it('company add --name --json, then company list --json shows it pending', async () => {
    const added = json(await admin(['company', 'add', '--name', 'Parcel Ltd', '--json']));
    const company = added.company as { id: number; name: string; status: string };
    expect(company).toMatchObject({ name: 'Parcel Ltd', status: 'pending' });
    secretCompanyId = company.id;

    const listed = json(await admin(['company', 'list', '--json']));
    expect(listed.companies).toEqual([
      expect.objectContaining({ id: company.id, name: 'Parcel Ltd', status: 'pending', domain: null }),
    ]);
  });

  it('company approve ID of a domain company prints its key and fingerprint and pins it', async () => {
    const key = SigningKey.generate();
    keyFiles.publish('parcel.example', key.publicKey.base64);
    const id = await addCompany({ name: 'Parcel Domain', domain: 'parcel.example' });
    const signer = { domain: 'parcel.example', key };
    expect((await cloud.signedCall('request', {}, signer)).body.error).toBe('org_not_approved');

    const run = await admin(['company', 'approve', String(id)]);
    expect(run, run.stderr).toMatchObject({ code: 0 });
    expect(run.stdout).toContain(key.publicKey.base64);
    expect(run.stdout).toContain(key.publicKey.fingerprint);
    expect(await companyOf(id)).toMatchObject({ status: 'approved', key: key.publicKey.base64 });
    const call = await cloud.signedCall('request', { ref: 'ORD-1' }, signer);
    expect(call.status, JSON.stringify(call.body)).toBe(200);
  });

  it('company approve fails clearly when the key file cannot be had, and leaves the company pending', async () => {
    const id = await addCompany({ name: 'No File', domain: 'nofile.example' });
    const run = await admin(['company', 'approve', String(id)]);
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe('');
    const problem = lines(run.stderr).find((line) => line.includes('key_fetch_failed'));
    expect(problem, run.stderr).toBeDefined();
    expect(problem).toContain('nofile.example');
    expect(problem).toContain('HTTP 404');
    expect(await companyOf(id)).toMatchObject({ status: 'pending', key: null });
  });

  it('company secret ID --json prints a glsk_ secret that works in a call', async () => {
    expect((await cloud.ops('POST', `/ops/companies/${secretCompanyId}/approve`)).status).toBe(200);
    const issued = json(await admin(['company', 'secret', String(secretCompanyId), '--json']));
    expect(issued.org_id).toBe(secretCompanyId);
    expect(issued.secret).toMatch(/^glsk_/);
    const call = await cloud.call('request', { org_id: secretCompanyId, secret: issued.secret });
    expect(call.status, JSON.stringify(call.body)).toBe(200);
    expect(call.body.code).toEqual(expect.any(String));
  });

  it('company suspend ID makes its calls answer 403 org_not_approved', async () => {
    const issued = await cloud.ops('POST', `/ops/companies/${secretCompanyId}/secret`);
    const auth = { org_id: secretCompanyId, secret: issued.body.secret as string };
    expect((await cloud.call('request', auth)).status).toBe(200);

    const run = await admin(['company', 'suspend', String(secretCompanyId)]);
    expect(run, run.stderr).toMatchObject({ code: 0 });
    expect(run.stdout).toContain('suspended');
    const call = await cloud.call('request', auth);
    expect(call.status).toBe(403);
    expect(call.body.error).toBe('org_not_approved');
    expect(await companyOf(secretCompanyId)).toMatchObject({ status: 'suspended' });
  });

  it('device add --label --json prints a device id and a provisioning code that provisions it', async () => {
    const added = json(await admin(['device', 'add', '--label', 'Back yard', '--json']));
    device = added.device as typeof device;
    expect(device).toMatchObject({ label: 'Back yard' });
    expect(device.device_id).toMatch(/^D[0-9A-Z]{10}$/);
    expect(device.provisioning_code).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{4})+$/);
    // The address the installer passes to provision: the cloud's public one, as its pages and links name it.
    expect(added.cloud_url).toBe(cloud.baseUrl);

    const response = await fetch(`${cloud.baseUrl}/api/device/provision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        code: device.provisioning_code,
        public_key: SigningKey.generate().publicKey.base64,
        objects: [{ id: 'gate', label: 'Back gate', kind: 'relay' }],
        version: '1.0.0',
      }),
    });
    expect(response.status).toBe(200);
    provisioned = (await response.json()) as ProvisionResponse;
    expect(provisioned.device_id).toBe(device.device_id);
  });

  it('device list shows the device, provisioned, not seen yet and in no rollout', async () => {
    const run = await admin(['device', 'list']);
    expect(run, run.stderr).toMatchObject({ code: 0 });
    const [header, ...rows] = lines(run.stdout);
    expect(header).toMatch(/^id\s+label\s+provisioned\s+online/);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.split(/\s{2,}/)).toEqual([
      device.device_id,
      'Back yard',
      'true',
      'false',
      '-',
      '-',
      '1.0.0',
      '-',
      '-',
    ]);
  });

  it('journal --json shows an opening attempt with its actor and outcome', async () => {
    const customerId = (await createCustomer(cloud.ctx, { displayName: 'Eva Customer' })).id;
    await pairDevice(cloud.ctx, { customerId, pairingCode: provisioned.pairing_code! });
    const courier = await secretCompany(cloud, 'Courier Ltd');
    const code = (await cloud.call('request', courier)).body.code as string;
    await claimRequest(cloud.ctx, { code, customerId });
    const numberId = provisioned.numbers[0]!.number_id;
    const { keyRef } = await issueAccessKey(cloud.ctx, {
      code,
      customerId,
      deviceId: device.device_id,
      objectIds: [numberId],
      keyExpiresAt: null,
    });
    // No controller is connected: the attempt is refused and journalled.
    const open = await cloud.call('open', {
      ...courier,
      key_ref: keyRef,
      number_id: numberId,
      actor: 'Driver 7',
    });
    expect(open.status).toBe(503);

    const listed = json(await admin(['journal', '--json']));
    expect(listed.entries).toEqual([
      expect.objectContaining({
        barrier: { id: device.device_id, name: 'Back yard' },
        number_label: 'Back gate',
        company: expect.objectContaining({ id: courier.org_id, name: 'Courier Ltd' }),
        actor: 'Driver 7',
        key_ref: keyRef,
        outcome: 'device_offline',
      }),
    ]);
  });

  it('an unknown command exits 2 and points to the usage', async () => {
    const run = await admin(['frobnicate', 'everything']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('unknown command "frobnicate everything"');
    expect(run.stderr).toContain('gatelink-admin --help');
  });

  it('an unreachable cloud gives one line that says what to do', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await admin(['company', 'list'], { url });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(lines(run.stderr)).toEqual([expect.stringContaining(`cannot reach the cloud at ${url}`)]);
    expect(run.stderr).toMatch(/is it running/);
  });
});
