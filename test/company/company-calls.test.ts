import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import type { Environment } from '../../company/command.js';
import { writeKeyFile } from '../../company/key-file.js';
import { runCompanyTool } from '../../company/tool.js';
import { secretCompany, signatureCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { FakeDevice, insertDevice } from '../support/fake-device.js';
import { KeyFileServer } from '../support/keyfile-server.js';

/**
 * `gatelink-company request`, `status` and `open` (docs/design.md section 11.2) against a running cloud, as a
 * company runs them: signed with its key file and with a secret, settings from flags or from the environment,
 * readable output or JSON for scripts, and refusals with their code and request id.
 */
const keyFiles = new KeyFileServer();
let database: TestDatabase;
let cloud: TestCloud;
let folder: string;
let device: FakeDevice;
let barrier: { deviceId: string; objectIds: number[] };
let customerId: number;

/** The settings of each mode, as environment variables and as flags. */
interface Mode {
  name: string;
  env: Environment;
  flags: string[];
}
const modes: Mode[] = [];

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'gatelink-company-calls-'));
  await keyFiles.start();
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
  const signing = await signatureCompany(cloud, keyFiles, 'calls-tool.example');
  const keyFile = join(folder, 'company-key.json');
  writeKeyFile(keyFile, { domain: 'calls-tool.example', key: signing.signer.key });
  const secret = await secretCompany(cloud, 'Secret Calls Ltd');
  modes.push(
    {
      name: 'signature',
      env: { GATELINK_URL: cloud.baseUrl, GATELINK_KEY_FILE: keyFile },
      flags: ['--url', cloud.baseUrl, '--key', keyFile],
    },
    {
      name: 'secret',
      env: {
        GATELINK_URL: cloud.baseUrl,
        GATELINK_ORG_ID: String(secret.org_id),
        GATELINK_SECRET: secret.secret,
      },
      flags: ['--url', cloud.baseUrl, '--org', String(secret.org_id), '--secret', secret.secret],
    },
  );
  customerId = (await createCustomer(cloud.ctx, { displayName: 'Tool Customer' })).id;
  barrier = await connectedBarrier();
});

afterAll(async () => {
  await device?.client.endAsync();
  await cloud?.stop();
  await database?.close();
  await keyFiles.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** A customer's barrier whose controller (a fake one, acknowledging as told) is connected to the broker. */
async function connectedBarrier(): Promise<{ deviceId: string; objectIds: number[] }> {
  const account = await insertDevice(cloud.ctx.db);
  await cloud.ctx.db
    .updateTable('devices')
    .set({ customer_id: customerId, name: 'Yard', paired_at: new Date() })
    .where('id', '=', account.id)
    .execute();
  const objects = await cloud.ctx.db
    .insertInto('device_objects')
    .values([
      { device_id: account.id, local_id: 'gate', label: 'Main gate', kind: 'relay' },
      { device_id: account.id, local_id: 'door', label: 'Side door', kind: 'relay' },
    ])
    .returning('id')
    .execute();
  device = await FakeDevice.connect(cloud.controllerLink.deviceUrl, account, {
    prefix: cloud.ctx.config.topicPrefix,
    cloudKey: cloud.ctx.serviceKey.publicKey,
  });
  await vi.waitFor(
    async () => {
      const row = await cloud.ctx.db
        .selectFrom('devices')
        .select('online')
        .where('id', '=', account.id)
        .executeTakeFirstOrThrow();
      if (!row.online) throw new Error('the controller is not online yet');
    },
    { timeout: 20_000, interval: 20 },
  );
  return { deviceId: account.id, objectIds: objects.map((object) => object.id) };
}

/** Runs the tool in this process with the given environment, with what it printed. */
async function tool(env: Environment, ...argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCompanyTool(argv, { out: (t) => (out += t), err: (t) => (err += t) }, env);
  return { code, out, err };
}

/** The customer claims the request and grants the barrier's first object. */
async function grant(code: string): Promise<number> {
  await claimRequest(cloud.ctx, { code, customerId });
  const { keyRef } = await issueAccessKey(cloud.ctx, {
    code,
    customerId,
    deviceId: barrier.deviceId,
    objectIds: [barrier.objectIds[0]!],
    keyExpiresAt: null,
  });
  return keyRef;
}

async function journalIds(keyRef: number): Promise<number[]> {
  const rows = await cloud.ctx.db
    .selectFrom('journal')
    .select('id')
    .where('key_id', '=', keyRef)
    .orderBy('id')
    .execute();
  return rows.map((row) => Number(row.id));
}

describe.each([0, 1])('request, status and open', (index) => {
  const mode = () => modes[index]!;

  it(`in ${index === 0 ? 'signature' : 'secret'} mode: a request with its QR code, its status, and an opening`, async () => {
    const made = await tool(mode().env, 'request', '--ref', 'ORD-7', '--ttl-hours', '2');
    expect(made.code, made.err).toBe(0);
    const code = /^Request ([0-9A-Z]{12}), open until (\S+ \S+) UTC \(2 h\)/.exec(made.out)?.[1];
    expect(code, made.out).toBeDefined();
    expect(made.out).toContain(`\n${cloud.baseUrl}/c/${code}\n`);
    // The link as a QR code drawn with block characters, several lines of them.
    expect(made.out.split('\n').filter((line) => /^[ ▀▄█]{20,}$/.test(line)).length).toBeGreaterThan(10);

    const fresh = await tool(mode().env, 'status', code!);
    expect(fresh.code, fresh.err).toBe(0);
    expect(fresh.out).toContain(`Request ${code}: new, the customer has not opened the link yet.`);
    expect(fresh.out).toMatch(/Reference: +ORD-7\n/);

    const keyRef = await grant(code!);
    const issued = await tool(mode().env, 'status', '--code', code!);
    expect(issued.out).toContain('issued, the customer granted access');
    expect(issued.out).toMatch(new RegExp(`key_ref: +${keyRef}\\n`));
    expect(issued.out).toMatch(new RegExp(`number_id: +${barrier.objectIds[0]} \\(Main gate\\)\\n`));

    const opening = tool(
      mode().env,
      'open',
      '--key-ref',
      String(keyRef),
      '--number-id',
      String(barrier.objectIds[0]),
      '--actor',
      'Anna, van 7',
    );
    await device.ack(await device.nextCommand());
    const opened = await opening;
    expect(opened.code, opened.err).toBe(0);
    expect(opened.out).toBe(`Opened: journal entry ${(await journalIds(keyRef))[0]}.\n`);

    const refused = await tool(
      mode().env,
      'open',
      '--key-ref',
      String(keyRef),
      '--number-id',
      String(barrier.objectIds[1]),
      '--actor',
      'Anna, van 7',
    );
    expect(refused.code).toBe(1);
    expect(refused.out).toBe('');
    expect(refused.err).toMatch(/^gatelink-company: forbidden: .+ \(request id [0-9a-f-]{36}\)\n$/);
  });

  it(`in ${index === 0 ? 'signature' : 'secret'} mode with flags and --json: every answer is one JSON object`, async () => {
    const made = await tool({}, 'request', ...mode().flags, '--ref', 'ORD-8', '--json');
    expect(made.code, made.err).toBe(0);
    const answer = JSON.parse(made.out) as { code: string; url: string; expires_in_hours: number };
    expect(answer).toMatchObject({ url: `${cloud.baseUrl}/c/${answer.code}`, expires_in_hours: 24 });

    const state = await tool({}, 'status', answer.code, ...mode().flags, '--json');
    expect(JSON.parse(state.out)).toMatchObject({ code: answer.code, state: 'new', ref: 'ORD-8' });

    const keyRef = await grant(answer.code);
    const opening = tool(
      {},
      'open',
      ...mode().flags,
      '--key-ref',
      String(keyRef),
      '--number-id',
      String(barrier.objectIds[0]),
      '--actor',
      'Ben',
      '--json',
    );
    await device.ack(await device.nextCommand());
    const opened = await opening;
    expect(JSON.parse(opened.out)).toEqual({ ok: 1, id: (await journalIds(keyRef))[0] });

    const unknown = await tool({}, 'status', 'AAAAAAAAAAAA', ...mode().flags, '--json');
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.out)).toMatchObject({
      error: 'not_found',
      message: expect.any(String),
      request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(unknown.err).toBe('');
  });
});

describe('settings from flags and from the environment', () => {
  it('a flag wins over its environment variable', async () => {
    const [signing, secret] = modes;
    // The environment names the secret company; the --key flag makes the call the signing company's.
    const made = await tool(secret!.env, 'request', '--key', signing!.env.GATELINK_KEY_FILE!, '--json');
    expect(made.code, made.out).toBe(0);
    const code = (JSON.parse(made.out) as { code: string }).code;
    // The signing company sees the request, the secret company does not.
    expect((await tool(signing!.env, 'status', code)).code).toBe(0);
    expect((await tool(secret!.env, 'status', code, '--json')).out).toContain('"not_found"');

    const wrongUrl = { ...signing!.env, GATELINK_URL: 'http://127.0.0.1:9/' };
    expect((await tool(wrongUrl, 'status', code, '--url', cloud.baseUrl)).code).toBe(0);
  });

  it('--org on the command line takes the secret from GATELINK_SECRET', async () => {
    const secret = modes[1]!;
    const env = { GATELINK_URL: cloud.baseUrl, GATELINK_SECRET: secret.env.GATELINK_SECRET };
    const made = await tool(env, 'request', '--org', secret.env.GATELINK_ORG_ID!);
    expect(made.code, made.err).toBe(0);
  });

  it('names what is missing, as a usage error', async () => {
    const [signing, secret] = modes;
    const noUrl = await tool({ GATELINK_KEY_FILE: signing!.env.GATELINK_KEY_FILE }, 'status', 'X');
    expect(noUrl.code).toBe(2);
    expect(noUrl.err).toContain('the service address is missing: give --url, or set GATELINK_URL');

    const noCredentials = await tool({ GATELINK_URL: cloud.baseUrl }, 'status', 'X');
    expect(noCredentials.code).toBe(2);
    expect(noCredentials.err).toContain('no credentials: give --key FILE (or GATELINK_KEY_FILE)');

    const noSecret = await tool({ GATELINK_URL: cloud.baseUrl }, 'status', 'X', '--org', '5');
    expect(noSecret.err).toContain('the secret is missing: set GATELINK_SECRET, or give --secret');

    const both = await tool({ ...signing!.env, ...secret!.env }, 'status', 'X');
    expect(both.err).toContain('GATELINK_KEY_FILE and GATELINK_ORG_ID/GATELINK_SECRET are both set');

    const bothFlags = await tool({}, 'status', 'X', ...signing!.flags, '--org', '5', '--secret', 's');
    expect(bothFlags.err).toContain('give either --key (a company that signs) or --org and --secret');

    const noCode = await tool(signing!.env, 'status');
    expect(noCode.err).toContain('--code is missing');
    const badOpen = await tool(signing!.env, 'open', '--key-ref', 'one', '--number-id', '1', '--actor', 'A');
    expect(badOpen.err).toContain('--key-ref one is not a whole number');
  });

  it('with --json, a usage error is JSON on stdout too', async () => {
    const run = await tool({ GATELINK_URL: cloud.baseUrl }, 'status', 'X', '--json');
    expect(run.code).toBe(2);
    expect(JSON.parse(run.out)).toEqual({
      error: 'usage',
      message: expect.stringContaining('no credentials'),
      request_id: null,
    });
    expect(run.err).toBe('');
  });

  it('a refusal by the cloud is printed with its code and request id', async () => {
    const secret = modes[1]!;
    const wrong = { ...secret.env, GATELINK_SECRET: 'glsk_wrong' };
    const run = await tool(wrong, 'request');
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/^gatelink-company: bad_secret: .+ \(request id [0-9a-f-]{36}\)\n$/);
    const invalid = await tool(secret.env, 'request', '--ttl-hours', '999', '--json');
    expect(JSON.parse(invalid.out)).toMatchObject({ error: 'invalid_field', field: 'ttl_hours' });
  });
});
