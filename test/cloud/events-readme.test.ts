import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../cloud/links/event-delivery/delivery-worker.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { callbackCompany, enqueuePings, firstSigningSecret } from '../support/event-company.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The signature checks cloud/README.md gives companies ("Verifying a delivery"), run as written against a real
 * delivery: the Node one with node:crypto, the Python one with the `cryptography` package (skipped where it is
 * not installed), and the `v1` one with the `standardwebhooks` package and the company's signing secret. Each accepts the delivery as it came and refuses it with one byte of the body changed.
 */
const README = readFileSync(resolve(import.meta.dirname, '../../cloud/README.md'), 'utf8');
const section = README.slice(README.indexOf('### Verifying a delivery'));
/** The `index`th example in `language` under "Verifying a delivery". */
const snippet = (language: string, index = 0) => {
  const found = [...section.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))][index]?.[1];
  if (!found) throw new Error(`no example ${index + 1} in ${language} under "Verifying a delivery"`);
  return found;
};
const pythonMissing = spawnSync('python3', ['-c', 'import cryptography']).status !== 0;

let database: TestDatabase;
let cloud: TestCloud;
let receiver: WebhookReceiver;
let key: string;
let secret: string;
let delivery: { headers: Record<string, string>; body: string };

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  const published = await cloud.app.inject({ method: 'GET', url: '/.well-known/service.json' });
  key = (JSON.parse(published.body) as { key: string }).key;
  receiver = new WebhookReceiver();
  await receiver.start(key);
  const companyId = await callbackCompany(cloud.ctx, 'Readme Ltd', receiver.url);
  secret = await firstSigningSecret(cloud.ctx, companyId);
  await enqueuePings(cloud.ctx, companyId);
  await deliverDue(cloud.ctx, { allowPrivateAddresses: true, timeoutMs: 2000 });
  const got = receiver.received[0]!;
  const headers: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    headers[name] = String(got.headers[name]);
  }
  delivery = { headers, body: got.body };
});

afterAll(async () => {
  await receiver?.stop();
  await cloud?.stop();
  await database?.close();
});

function run(command: string, args: string[]): string {
  const result = spawnSync(command, args, {
    env: { ...process.env, DELIVERY: JSON.stringify(delivery) },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr}`);
  return result.stdout.trim();
}

describe("the README's signature checks", () => {
  it('in Node: accept the delivery, refuse it tampered with', () => {
    const program = [
      `const KEY = ${JSON.stringify(key)};`,
      snippet('js'),
      'const input = JSON.parse(process.env.DELIVERY);',
      "const tampered = input.body.replace('ping', 'pong');",
      'console.log(verifyEvent(input.headers, input.body), verifyEvent(input.headers, tampered));',
    ].join('\n');
    expect(run(process.execPath, ['--input-type=module', '-e', program])).toBe('true false');
  });

  it('in Node with the standardwebhooks package (v1): accept the delivery, refuse it tampered with', () => {
    const program = [
      `const SECRET = ${JSON.stringify(secret)};`,
      snippet('js', 1),
      'const input = JSON.parse(process.env.DELIVERY);',
      "const tampered = input.body.replace('ping', 'pong');",
      'const refused = (body) => { try { verifiedEvent(input.headers, body); return false; } catch { return true; } };',
      'console.log(verifiedEvent(input.headers, input.body).type, refused(tampered));',
    ].join('\n');
    expect(run(process.execPath, ['--input-type=module', '-e', program])).toBe('ping true');
  });

  it.skipIf(pythonMissing)('in Python (cryptography): accept the delivery, refuse it tampered with', () => {
    const program = [
      `KEY = ${JSON.stringify(key)}`,
      snippet('python'),
      'import json, os',
      'd = json.loads(os.environ["DELIVERY"])',
      'print(verify_event(d["headers"], d["body"].encode()), verify_event(d["headers"], d["body"].replace("ping", "pong").encode()))',
    ].join('\n');
    expect(run('python3', ['-c', program])).toBe('True False');
  });
});
