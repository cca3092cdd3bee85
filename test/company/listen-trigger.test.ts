import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueSandboxSecret } from '../../cloud/rules/call-auth/secret.js';
import { verifyWebhook } from '../../company/client/index.js';
import { runCompanyTool } from '../../company/tool.js';
import { secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { firstSigningSecret } from '../support/event-company.js';
import { type Received, WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * `gatelink-company trigger` and `listen --forward-to` as a developer runs them on a laptop (cloud/README.md,
 * "Trying events"): a sample sent from one terminal reaches a local receiver through the other, which verifies
 * it with the `standardwebhooks` package (v1, the company's signing secret) and with our client (v1a), as a
 * real delivery; each forwarded event is printed with the receiver's answer; a refusal ends the command.
 */
let database: TestDatabase;
let cloud: TestCloud;
let receiver: WebhookReceiver;
let serviceKey: string;
let company: { org_id: number; secret: string };
let signingSecret: string;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  const published = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
  serviceKey = (JSON.parse(published.body) as { key: string }).key;
  receiver = new WebhookReceiver();
  await receiver.start(serviceKey);
  company = await secretCompany(cloud, 'Laptop Couriers');
  signingSecret = await firstSigningSecret(cloud.ctx, company.org_id);
});

afterAll(async () => {
  await receiver?.stop();
  await cloud?.stop();
  await database?.close();
});

/** The tool run as the company, its secret in the environment as the README advises. */
function tool(args: string[], stop?: AbortSignal) {
  const printed = { out: '', err: '' };
  const env = {
    GATELINK_URL: cloud.baseUrl,
    GATELINK_ORG_ID: String(company.org_id),
    GATELINK_SECRET: company.secret,
  };
  const code = runCompanyTool(
    args,
    { out: (text) => (printed.out += text), err: (text) => (printed.err += text) },
    env,
    stop,
  );
  return { printed, code };
}

/** A port nothing listens on: one the system gave out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('trigger and listen', () => {
  it('forwards a sample to a local receiver, which verifies it with standardwebhooks and with our client', async () => {
    const stop = new AbortController();
    const listening = tool(['listen', '--forward-to', receiver.url], stop.signal);
    await expect.poll(() => cloud.streams.count(company.org_id)).toBe(1);

    const sent = tool(['trigger', 'open.gate_not_moved']);
    expect(await sent.code).toBe(0);
    const id = /id ([0-9a-f-]{36})/.exec(sent.printed.out)?.[1];
    expect(sent.printed.out).toContain('Sent a sample open.gate_not_moved event');

    await expect.poll(() => receiver.received.length).toBe(1);
    const got: Received = receiver.received[0]!;
    expect(got.id).toBe(id);
    expect(got.verified).toBe(true);
    expect(new Webhook(signingSecret).verify(got.body, got.headers as Record<string, string>)).toMatchObject({
      type: 'open.gate_not_moved',
      id,
    });
    expect(verifyWebhook({ headers: got.headers, body: got.body, publicKey: serviceKey }).id).toBe(id);
    await expect
      .poll(() => listening.printed.out)
      .toMatch(new RegExp(`open\\.gate_not_moved +${id} +-> 204`));

    stop.abort();
    expect(await listening.code).toBe(0);
    expect(listening.printed.out).toContain('Stopped.');
    await expect.poll(() => cloud.streams.count(company.org_id)).toBe(0);
  });

  it('prints a receiver that does not answer, and goes on', async () => {
    receiver.received.length = 0;
    const stop = new AbortController();
    const listening = tool(
      ['listen', '--forward-to', `http://127.0.0.1:${await closedPort()}/nobody`, '--json'],
      stop.signal,
    );
    await expect.poll(() => cloud.streams.count(company.org_id)).toBe(1);
    expect(await tool(['trigger', 'ping']).code).toBe(0);
    await expect.poll(() => listening.printed.out).toMatch(/"error":"ECONNREFUSED"/);
    const line = JSON.parse(listening.printed.out.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(line).toMatchObject({ type: 'ping', error: 'ECONNREFUSED' });
    stop.abort();
    expect(await listening.code).toBe(0);
  });

  it('with --sandbox and the sandbox secret, forwards the sandbox events, each saying so', async () => {
    receiver.received.length = 0;
    const { secret } = await issueSandboxSecret(cloud.ctx, company.org_id);
    const sandbox = await cloud.ctx.db
      .selectFrom('companies')
      .select('id')
      .where('sandbox_of', '=', company.org_id)
      .executeTakeFirstOrThrow();
    const env = {
      GATELINK_URL: cloud.baseUrl,
      GATELINK_ORG_ID: String(company.org_id),
      GATELINK_SECRET: secret,
    };
    const run = (args: string[], stop?: AbortSignal) => {
      const printed = { out: '', err: '' };
      const io = {
        out: (text: string) => (printed.out += text),
        err: (text: string) => (printed.err += text),
      };
      return { printed, code: runCompanyTool(args, io, env, stop) };
    };
    const stop = new AbortController();
    const listening = run(['listen', '--sandbox', '--forward-to', receiver.url], stop.signal);
    await expect.poll(() => cloud.streams.count(sandbox.id)).toBe(1);
    expect(cloud.streams.count(company.org_id)).toBe(0);

    const sent = run(['trigger', '--sandbox', 'open.succeeded']);
    expect(await sent.code).toBe(0);
    await expect.poll(() => receiver.received.length).toBe(1);
    const got: Received = receiver.received[0]!;
    expect(got.verified).toBe(true);
    expect(JSON.parse(got.body)).toMatchObject({ sandbox: true, type: 'open.succeeded' });
    stop.abort();
    expect(await listening.code).toBe(0);

    const withoutFlag = run(['trigger', 'ping']);
    expect(await withoutFlag.code).toBe(1);
    expect(withoutFlag.printed.err).toContain('sandbox_secret');
  });

  it('refuses an unknown kind before calling, and ends listen on a refusal', async () => {
    const unknown = tool(['trigger', 'open.maybe']);
    expect(await unknown.code).toBe(2);
    expect(unknown.printed.err).toContain('open.maybe is not a kind of event; the kinds are request.claimed');
    const env = {
      GATELINK_URL: cloud.baseUrl,
      GATELINK_ORG_ID: String(company.org_id),
      GATELINK_SECRET: `glsk_${'A'.repeat(43)}`,
    };
    let err = '';
    const code = await runCompanyTool(
      ['listen', '--forward-to', receiver.url],
      { out: () => {}, err: (t) => (err += t) },
      env,
    );
    expect(code).toBe(1);
    expect(err).toContain('bad_secret');
  });
});
