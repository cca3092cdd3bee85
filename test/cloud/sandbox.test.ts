import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { issueSandboxSecret } from '../../cloud/rules/call-auth/secret.js';
import { startOperatorSession } from '../../cloud/rules/operators/operator-sessions.js';
import { sweepNotMoved } from '../../cloud/rules/positions/gate-sweeps.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { GatelinkClient } from '../../company/client/index.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import {
  type Answer,
  type Signer,
  secretCompany,
  signatureCompany,
  startTestCloud,
  type TestCloud,
} from '../support/cloud.js';
import { insertBarrier, signedInCustomer, type TestBarrier } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';
import { runProgram } from '../support/program-run.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The sandbox (docs/design.md section 11.9) as a company's developer meets it through the API: every call with
 * `"sandbox": true` reaches a simulated customer and a barrier the cloud runs, answers say so, and nothing of it
 * touches the live service, nor the live service it.
 */
const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
const keyFiles = new KeyFileServer();
let database: TestDatabase;
let cloud: TestCloud;
let courier: { id: number; signer: Signer };
let liveCustomer: { id: number };
let liveBarrier: TestBarrier;

beforeAll(async () => {
  await keyFiles.start();
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock, env: { GATELINK_DEV_KEYFILE_URL: keyFiles.template } });
  courier = await signatureCompany(cloud, keyFiles, 'courier.example');
  liveCustomer = await signedInCustomer(cloud, 'Real customer');
  liveBarrier = await insertBarrier(cloud, liveCustomer.id, { online: true });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
  await keyFiles.stop();
});

const sandboxed = (body: Record<string, unknown>) => ({ sandbox: true, ...body });

/** A request the courier makes in its sandbox, granted there by the simulated customer; its key. */
async function grantedInSandbox(
  signer: Signer = courier.signer,
): Promise<{ code: string; keyRef: number; numberId: number }> {
  const asked = await cloud.signedCall('request', sandboxed({ ref: 'TRY-1' }), signer);
  expect(asked.status).toBe(200);
  const code = asked.body.code as string;
  const granted = await cloud.signedCall('sandbox', sandboxed({ do: 'grant', code }), signer);
  expect(granted.status).toBe(200);
  const status = await cloud.signedCall('status', sandboxed({ code }), signer);
  const numbers = status.body.numbers as { number_id: number }[];
  return { code, keyRef: status.body.key_ref as number, numberId: numbers[0]!.number_id };
}

/** A live request of the courier, granted by the real customer on the real barrier; its key. */
async function grantedLive(): Promise<{ code: string; keyRef: number; numberId: number }> {
  const asked = await cloud.signedCall('request', {}, courier.signer);
  const code = asked.body.code as string;
  await claimRequest(cloud.ctx, { code, customerId: liveCustomer.id });
  const numberId = liveBarrier.objects[0]!.number_id;
  const { keyRef } = await issueAccessKey(cloud.ctx, {
    code,
    customerId: liveCustomer.id,
    deviceId: liveBarrier.deviceId,
    objectIds: [numberId],
    keyExpiresAt: null,
  });
  return { code, keyRef, numberId };
}

function expectSandbox(answer: Answer): void {
  expect(answer.headers['gatelink-sandbox']).toBe('true');
}

async function sandboxEvents(): Promise<string[]> {
  const sandbox = await cloud.ctx.db
    .selectFrom('companies')
    .select('id')
    .where('sandbox_of', '=', courier.id)
    .executeTakeFirstOrThrow();
  const rows = await cloud.ctx.db
    .selectFrom('events')
    .select('type')
    .where('company_id', '=', sandbox.id)
    .orderBy('seq')
    .execute();
  return rows.map((row) => row.type);
}

describe('the sandbox through the API', () => {
  it('asks, has the simulated customer grant, opens, and sees the gate open and close, every answer marked', async () => {
    const asked = await cloud.signedCall('request', sandboxed({ ref: 'TRY-1' }), courier.signer);
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ sandbox: true, expires_in_hours: 24 });
    expectSandbox(asked);
    const code = asked.body.code as string;

    const granted = await cloud.signedCall('sandbox', sandboxed({ do: 'grant', code }), courier.signer);
    expect(granted.body).toMatchObject({ sandbox: true, code });
    const status = await cloud.signedCall('status', sandboxed({ code }), courier.signer);
    expect(status.body).toMatchObject({ sandbox: true, state: 'issued', key_ref: granted.body.key_ref });
    const [number] = status.body.numbers as { number_id: number; label: string }[];
    expect(number!.label).toBe('Sandbox gate');

    const opened = await cloud.signedCall(
      'open',
      sandboxed({ key_ref: status.body.key_ref, number_id: number!.number_id, actor: 'Anna, shift 2' }),
      courier.signer,
    );
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({ sandbox: true, ok: 1 });
    expectSandbox(opened);

    // The gate's moves come as a controller's signed reports, onto the same journal entry.
    const entry = () =>
      cloud.ctx.db
        .selectFrom('journal')
        .select(['outcome', 'actor', 'gate_opened_at', 'gate_closed_at', 'device_id'])
        .where('id', '=', opened.body.id as number)
        .executeTakeFirstOrThrow();
    await waitFor(async () => (await entry()).gate_closed_at !== null, 'the sandbox gate closing');
    const written = await entry();
    expect(written).toMatchObject({ outcome: 'opened', actor: 'Anna, shift 2' });
    expect(written.gate_opened_at!.getTime()).toBeLessThan(written.gate_closed_at!.getTime());
    expect(written.device_id).not.toBe(liveBarrier.deviceId);
    expect(await sandboxEvents()).toEqual([
      'request.claimed',
      'request.issued',
      'open.succeeded',
      'open.gate_opened',
      'open.gate_closed',
    ]);
  });

  it('answers the next openings as the outcome chosen: offline, busy, a gate that never moves', async () => {
    const { keyRef, numberId } = await grantedInSandbox();
    const open = () =>
      cloud.signedCall(
        'open',
        sandboxed({ key_ref: keyRef, number_id: numberId, actor: 'Ben' }),
        courier.signer,
      );
    const choose = async (outcome: string) => {
      const chosen = await cloud.signedCall('sandbox', sandboxed({ do: 'outcome', outcome }), courier.signer);
      expect(chosen.body).toEqual({ sandbox: true, outcome });
    };

    await choose('offline');
    const offline = await open();
    expect(offline.status).toBe(503);
    expect(offline.body.error).toBe('device_offline');
    expectSandbox(offline);

    await choose('busy');
    const busy = await open();
    expect(busy.status).toBe(502);
    expect(busy.body).toMatchObject({ error: 'device_error', detail: 'busy' });

    await choose('gate_not_moved');
    // A while after the gate last closed, so that this opening finds it shut.
    clock.advance(60_000);
    const still = await open();
    expect(still.body).toMatchObject({ sandbox: true, ok: 1 });
    const entry = () =>
      cloud.ctx.db
        .selectFrom('journal')
        .select(['acked_at', 'gate_not_moved_at', 'gate_opened_at'])
        .where('id', '=', still.body.id as number)
        .executeTakeFirstOrThrow();
    // The answer leaves as the acknowledgement's journal write starts (docs/design.md section 5.1).
    await waitFor(async () => (await entry()).acked_at !== null, 'the acknowledgement in the journal');
    clock.advance(60 * 60_000);
    expect(await sweepNotMoved(cloud.ctx)).toBe(1);
    expect(await entry()).toMatchObject({ gate_opened_at: null, gate_not_moved_at: clock.now() });
    expect((await sandboxEvents()).at(-1)).toBe('open.gate_not_moved');
    await choose('opened');
  });

  it('withdraws a key as the simulated customer, and the next open is refused revoked', async () => {
    const { keyRef, numberId } = await grantedInSandbox();
    const withdrawn = await cloud.signedCall(
      'sandbox',
      sandboxed({ do: 'withdraw', key_ref: keyRef }),
      courier.signer,
    );
    expect(withdrawn.body).toEqual({ sandbox: true, key_ref: keyRef, withdrawn: true });
    const open = await cloud.signedCall(
      'open',
      sandboxed({ key_ref: keyRef, number_id: numberId, actor: 'Ben' }),
      courier.signer,
    );
    expect(open.body.error).toBe('revoked');
    expectSandbox(open);
  });
});

describe('the sandbox and the live service never meet', () => {
  it('[attack:sandbox.opens-live-key] a sandbox call cannot open a live key, nor read a live request', async () => {
    const live = await grantedLive();
    const open = await cloud.signedCall(
      'open',
      sandboxed({ key_ref: live.keyRef, number_id: live.numberId, actor: 'Mallory' }),
      courier.signer,
    );
    expect(open.status).toBe(403);
    expect(open.body.error).toBe('forbidden');
    const status = await cloud.signedCall('status', sandboxed({ code: live.code }), courier.signer);
    expect(status.status).toBe(404);
    const grant = await cloud.signedCall(
      'sandbox',
      sandboxed({ do: 'grant', code: live.code }),
      courier.signer,
    );
    expect(grant.status).toBe(404);
    const journal = await cloud.ctx.db
      .selectFrom('journal')
      .select('id')
      .where('device_id', '=', liveBarrier.deviceId)
      .execute();
    expect(journal).toEqual([]);
  });

  it('a live call cannot open a sandbox key, nor read a sandbox request, and is never marked', async () => {
    const sandbox = await grantedInSandbox();
    const open = await cloud.signedCall(
      'open',
      { key_ref: sandbox.keyRef, number_id: sandbox.numberId, actor: 'Ben' },
      courier.signer,
    );
    expect(open.body.error).toBe('forbidden');
    expect(open.headers['gatelink-sandbox']).toBeUndefined();
    const status = await cloud.signedCall('status', { code: sandbox.code }, courier.signer);
    expect(status.status).toBe(404);
    const moved = await cloud.signedCall('sandbox', { do: 'outcome', outcome: 'busy' }, courier.signer);
    expect(moved.status).toBe(400);
    expect(moved.body.error).toBe('sandbox_only');
  });

  it('refuses a sandbox flag that is not true, and a move it does not know, naming the field', async () => {
    const flag = await cloud.signedCall('request', { sandbox: 'yes' }, courier.signer);
    expect(flag.body).toMatchObject({ error: 'invalid_field', field: 'sandbox' });
    const move = await cloud.signedCall('sandbox', sandboxed({ do: 'explode' }), courier.signer);
    expect(move.body).toMatchObject({ error: 'invalid_field', field: 'do' });
  });

  it('[attack:sandbox.flag-added-on-the-way] the flag is part of the signed body: added later, the signature fails', async () => {
    const body = JSON.stringify({ key_ref: 1, number_id: 1, actor: 'Ben' });
    const signed = await cloud.signedCall('open', body, courier.signer);
    expect(signed.body.error).not.toBe('bad_signature');
    // The same signature over a body with the flag added by someone on the way.
    const { signRequest } = await import('../../shared/crypto/request-signing.js');
    const ts = Math.floor(clock.now().getTime() / 1000);
    const headers = signRequest(courier.signer.key, { domain: courier.signer.domain, body, ts });
    const changed = await cloud.call('open', body.replace('{', '{"sandbox":true,'), { ...headers });
    expect(changed.status).toBe(401);
    expect(changed.body.error).toBe('bad_signature');
  });
});

describe('the sandbox to operators', () => {
  it("is nobody's company in the lists, and its use is told alike by the console, the API and the CLI", async () => {
    const listed = await cloud.ops('GET', '/ops/companies');
    const ids = (listed.body.companies as { id: number }[]).map((company) => company.id);
    const sandbox = await cloud.ctx.db
      .selectFrom('companies')
      .select('id')
      .where('sandbox_of', '=', courier.id)
      .executeTakeFirstOrThrow();
    expect(ids).toContain(courier.id);
    expect(ids).not.toContain(sandbox.id);
    expect((await cloud.ops('GET', `/ops/companies/${sandbox.id}`)).status).toBe(404);

    const shown = await cloud.ops('GET', `/ops/companies/${courier.id}`);
    const use = shown.body.sandbox as Record<string, unknown>;
    expect(use).toMatchObject({ outcome: 'opened' });
    expect(use.requests).toBeGreaterThanOrEqual(3);
    expect(use.openings).toBeGreaterThanOrEqual(4);
    const words = `${use.requests} requests, ${use.openings} openings; next openings: opened; events: no callback address`;

    const console = new BrowserClient(cloud.app);
    console.setCookie('gatelink-console', await startOperatorSession(cloud.ctx));
    const page = visibleText((await console.get(`/console/companies/${courier.id}`)).html);
    expect(page).toContain(words);

    const { OPERATOR_TOKEN: _token, GATELINK_URL: _url, ...env } = process.env;
    const root = resolve(import.meta.dirname, '../..');
    const admin = resolve(root, 'bin/gatelink-admin.mjs');
    const args = [
      '--url',
      cloud.baseUrl,
      '--token',
      cloud.operatorToken,
      'company',
      'show',
      String(courier.id),
    ];
    const printed = await runProgram([admin, ...args], { cwd: root, env });
    expect(printed, printed.stderr).toMatchObject({ code: 0 });
    expect(printed.stdout).toContain(`Sandbox  made ${String(use.made_at)}: ${words}`);
  });
});

describe('who has a sandbox', () => {
  it('a company waiting for approval tries it with the key it proved to hold, and live calls stay refused', async () => {
    const key = SigningKey.generate();
    const created = await cloud.ops('POST', '/ops/companies', {
      name: 'New Cleaners',
      domain: 'cleaners.example',
    });
    const id = (created.body.company as { id: number }).id;
    await cloud.ctx.db
      .updateTable('companies')
      .set({ key_proven: key.publicKey.base64 })
      .where('id', '=', id)
      .execute();
    const signer = { domain: 'cleaners.example', key };
    const live = await cloud.signedCall('request', {}, signer);
    expect(live.body.error).toBe('org_not_approved');
    const { keyRef, numberId } = await grantedInSandbox(signer);
    const opened = await cloud.signedCall(
      'open',
      sandboxed({ key_ref: keyRef, number_id: numberId, actor: 'Cleo' }),
      signer,
    );
    expect(opened.body).toMatchObject({ sandbox: true, ok: 1 });
  });

  it('a suspended company has none', async () => {
    const key = SigningKey.generate();
    keyFiles.publish('gone.example', key.publicKey.base64);
    const suspended = await signatureCompany(cloud, keyFiles, 'gone.example');
    await cloud.ctx.db
      .updateTable('companies')
      .set({ status: 'suspended' })
      .where('id', '=', suspended.id)
      .execute();
    cloud.ctx.companyCache.forget(suspended.id);
    const answer = await cloud.signedCall('request', sandboxed({}), suspended.signer);
    expect(answer.body.error).toBe('org_not_approved');
  });

  it('a company with a secret calls its sandbox with its sandbox secret, each secret with its own calls only', async () => {
    const company = await secretCompany(cloud, 'Quick Couriers');
    const { secret } = await issueSandboxSecret(cloud.ctx, company.org_id);
    expect(secret).toMatch(/^glsb_[A-Za-z0-9_-]{43}$/);
    const sandbox = { org_id: company.org_id, secret, sandbox: true };

    const asked = await cloud.call('request', sandbox);
    expect(asked.body).toMatchObject({ sandbox: true });
    const granted = await cloud.call('sandbox', { ...sandbox, do: 'grant', code: asked.body.code });
    expect(granted.status).toBe(200);

    const withoutFlag = await cloud.call('request', { org_id: company.org_id, secret });
    expect(withoutFlag.status).toBe(401);
    expect(withoutFlag.body.error).toBe('sandbox_secret');
    const liveInSandbox = await cloud.call('request', { ...company, sandbox: true });
    expect(liveInSandbox.status).toBe(401);
    expect(liveInSandbox.body.error).toBe('live_secret');
    // The company client, as a developer's program uses it.
    const client = new GatelinkClient({
      baseUrl: cloud.baseUrl,
      auth: { orgId: company.org_id, secret },
      sandbox: true,
      now: () => clock.now().getTime(),
    });
    const made = await client.request({ ref: 'CLIENT-1' });
    expect(made.sandbox).toBe(true);
    expect(await client.sandboxMove({ do: 'grant', code: made.code })).toMatchObject({ sandbox: true });
    expect((await client.status(made.code)).state).toBe('issued');

    const other = await secretCompany(cloud, 'Other Couriers');
    const borrowed = await cloud.call('request', { org_id: other.org_id, secret, sandbox: true });
    expect(borrowed.body.error).toBe('bad_secret');
  });
});
