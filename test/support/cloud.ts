import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogStream } from '../../cloud/app.js';
import { type RunningCloud, startCloud } from '../../cloud/cloud.js';
import type { Clock } from '../../cloud/foundation/clock.js';
import { type CloudConfig, loadCloudConfig } from '../../cloud/foundation/config.js';
import type { DatabaseHandle } from '../../cloud/foundation/db/database.js';
import type { HttpTimeouts } from '../../cloud/foundation/http/timeouts.js';
import type { SandboxGateTimes } from '../../cloud/links/controllers/sandbox-controller.js';
import type { DeliveryOptions } from '../../cloud/links/event-delivery/delivery-worker.js';
import type { DigestDeliveryOptions } from '../../cloud/links/mail/digest-delivery.js';
import type { Mailer } from '../../cloud/links/mail/mailer.js';
import type { MailDeliveryOptions } from '../../cloud/links/mail/opening-mail-delivery.js';
import type { Resolver } from '../../cloud/links/outbound-http/safe-connection.js';
import type { PushDeliveryOptions } from '../../cloud/links/web-push/push-delivery.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { signRequest } from '../../shared/crypto/request-signing.js';

/**
 * A cloud for one test file: real HTTP routes, real broker on a free port, the test's database, a temporary
 * data folder, and quiet logs. Calls go through Fastify's inject (no sockets) unless a test needs the network.
 */
export interface TestCloud extends RunningCloud {
  dataDir: string;
  /** POST /api/company.php?a=<action> with a JSON body (string bodies are sent as they are). */
  call(action: string, body: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** The same call, signed as `domain` with `key`. */
  signedCall(
    action: string,
    body: unknown,
    signer: Signer,
    headers?: Record<string, string>,
  ): Promise<Answer>;
  ops(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer>;
}

export interface Signer {
  domain: string;
  key: SigningKey;
  ts?: number;
  nonce?: string;
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | number | undefined>;
}

/** A quiet cloud on loopback with ports chosen by the system, its data in `dataDir`; `env` adds to it. */
export function localCloudConfig(dataDir: string, env: Record<string, string> = {}): CloudConfig {
  return loadCloudConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    MQTT_PORT: '0',
    GATELINK_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...env,
  });
}

/**
 * One service key for every test cloud of this process, as instances reading one key file share theirs: the
 * clouds a file starts on its one database must sign with the key that database recorded first
 * (cloud/rules/service-key/recorded-service-key.ts). A test that wants another names SIGNING_KEY_FILE in `env`.
 */
let sharedKeyFile: string | undefined;

function testServiceKeyFile(): string {
  if (sharedKeyFile) return sharedKeyFile;
  const dir = mkdtempSync(join(tmpdir(), 'gatelink-test-key-'));
  const file = join(dir, 'signing-key.pem');
  writeFileSync(file, SigningKey.generate().toPem(), { mode: 0o600 });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  sharedKeyFile = file;
  return file;
}

export async function startTestCloud(options: {
  database: DatabaseHandle;
  clock?: Clock;
  env?: Record<string, string>;
  ackTimeoutMs?: number;
  /** When the sandbox gates move; by default within milliseconds, opened then closed. */
  sandboxGate?: SandboxGateTimes;
  httpTimeouts?: HttpTimeouts;
  /** Where sign-in codes go; by default SMTP_URL of `env`, or the (silent) log. */
  mailer?: Mailer;
  /** How host names resolve (callback addresses); by default nothing resolves, so no test reaches the network. */
  resolveHost?: Resolver;
  /** The running event delivery, off unless given: suites deliver with `deliverDue` when they choose. */
  eventDelivery?: Partial<DeliveryOptions>;
  /** The running Web Push delivery, off unless given: suites send with `deliverDuePushes` when they choose. */
  pushDelivery?: Partial<PushDeliveryOptions>;
  /** Where the log's JSON lines go (with LOG_LEVEL in `env`); nowhere by default. */
  logStream?: LogStream;
  /** The running delivery of e-mails of openings, off unless given: suites send with `deliverDueMails`. */
  mailDelivery?: Partial<MailDeliveryOptions>;
  /** The running delivery of daily digests, off unless given: suites send with `deliverDueDigests`. */
  digestDelivery?: Partial<DigestDeliveryOptions>;
  /** Rollouts' update delivery job; off unless given: suites call `controllerLink.updates.deliverDue()`. */
  updateDelivery?: { intervalMs?: number; resendAfterMs?: number };
}): Promise<TestCloud> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatelink-test-'));
  const config = localCloudConfig(dataDir, { SIGNING_KEY_FILE: testServiceKeyFile(), ...options.env });
  const cloud = await startCloud({
    config,
    database: options.database,
    jobs: false,
    eventDelivery: options.eventDelivery ?? false,
    pushDelivery: options.pushDelivery ?? false,
    mailDelivery: options.mailDelivery ?? false,
    digestDelivery: options.digestDelivery ?? false,
    updateDelivery: options.updateDelivery ?? false,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.ackTimeoutMs === undefined ? {} : { ackTimeoutMs: options.ackTimeoutMs }),
    sandboxGate: options.sandboxGate ?? { opensAfterMs: 5, closesAfterMs: 5 },
    ...(options.httpTimeouts ? { httpTimeouts: options.httpTimeouts } : {}),
    ...(options.mailer ? { mailer: options.mailer } : {}),
    ...(options.logStream ? { logStream: options.logStream } : {}),
    resolveHost: options.resolveHost ?? (async () => []),
  });
  const send = async (
    method: 'GET' | 'POST',
    url: string,
    payload: string | undefined,
    headers: Record<string, string>,
  ): Promise<Answer> => {
    const response = await cloud.app.inject({
      method,
      url,
      headers,
      ...(payload === undefined ? {} : { payload }),
    });
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(response.body);
    } catch {
      body = { raw: response.body };
    }
    return { status: response.statusCode, body, headers: response.headers };
  };
  const encode = (body: unknown) => (typeof body === 'string' ? body : JSON.stringify(body));
  return {
    ...cloud,
    dataDir,
    call: (action, body, headers = {}) =>
      send('POST', `/api/company.php?a=${action}`, encode(body), {
        'content-type': 'application/json',
        ...headers,
      }),
    signedCall: (action, body, signer, headers = {}) => {
      const payload = encode(body);
      const now = Math.floor((options.clock?.now().getTime() ?? Date.now()) / 1000);
      const signed = signRequest(signer.key, {
        domain: signer.domain,
        body: payload,
        ts: signer.ts ?? now,
        ...(signer.nonce ? { nonce: signer.nonce } : {}),
      });
      return send('POST', `/api/company.php?a=${action}`, payload, {
        'content-type': 'application/json',
        ...signed,
        ...headers,
      });
    },
    ops: (method, path, body) =>
      send(method, path, body === undefined ? undefined : JSON.stringify(body), {
        authorization: `Bearer ${cloud.operatorToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      }),
    async stop() {
      await cloud.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An approved company that signs with its own key, published on the given key file server. */
export async function signatureCompany(
  cloud: TestCloud,
  keyFiles: { publish(domain: string, key: string): void },
  domain: string,
): Promise<{ id: number; signer: Signer }> {
  const key = SigningKey.generate();
  keyFiles.publish(domain, key.publicKey.base64);
  const created = await cloud.ops('POST', '/ops/companies', { name: `Company ${domain}`, domain });
  const id = (created.body.company as { id: number }).id;
  const approved = await cloud.ops('POST', `/ops/companies/${id}/approve`);
  if (approved.status !== 200) throw new Error(`approve failed: ${JSON.stringify(approved.body)}`);
  return { id, signer: { domain, key } };
}

/** An approved company without a domain, with a fresh secret. */
export async function secretCompany(
  cloud: TestCloud,
  name: string,
): Promise<{ org_id: number; secret: string }> {
  const created = await cloud.ops('POST', '/ops/companies', { name });
  const id = (created.body.company as { id: number }).id;
  await cloud.ops('POST', `/ops/companies/${id}/approve`);
  const issued = await cloud.ops('POST', `/ops/companies/${id}/secret`);
  return { org_id: id, secret: issued.body.secret as string };
}
