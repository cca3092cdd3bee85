import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordedAddress } from '../../cloud/foundation/data-folder.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { startCloudProcess } from '../support/cloud-process.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type ProgramRun, runProgram } from '../support/program-run.js';

/**
 * `gatelink-admin keys init` (cloud/README.md, "Running in production"): makes the service key and the operator
 * token file a production cloud reads, never over existing ones, and the cloud then starts in production.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const ADMIN = resolve(ROOT, 'bin/gatelink-admin.mjs');

let dir: string;
let database: TestDatabase | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatelink-keys-init-'));
  if (process.env.DATABASE_URL) database = await createTestDatabase();
});

afterAll(async () => {
  await database?.close();
  rmSync(dir, { recursive: true, force: true });
});

function keysInit(env: Record<string, string>, ...flags: string[]): Promise<ProgramRun> {
  // The test runner sets BASE_URL for its own purposes; the cloud's environment is only what the test gives.
  const {
    OPERATOR_TOKEN: _token,
    SIGNING_KEY_FILE: _key,
    GATELINK_DATA_DIR: _data,
    BASE_URL: _base,
    DATABASE_URL: _db,
    ...rest
  } = process.env;
  return runProgram([ADMIN, 'keys', 'init', ...flags], { cwd: ROOT, env: { ...rest, ...env } });
}

describe('gatelink-admin keys init', { timeout: 60_000 }, () => {
  it('makes the service key and the operator token, private to their owner, and prints the key to compare', async () => {
    const data = join(dir, 'fresh');
    const run = await keysInit({ GATELINK_DATA_DIR: data });

    expect(run.code, run.stderr).toBe(0);
    const keyFile = join(data, 'signing-key.pem');
    const key = SigningKey.fromPem(readFileSync(keyFile, 'utf8'));
    expect(run.stdout).toContain(`Service key     ${keyFile} (made)`);
    expect(run.stdout).toContain(`fingerprint   ${key.publicKey.fingerprint}`);
    expect(run.stdout).toContain(`Operator token  ${join(data, 'operator-token')} (made)`);
    expect(statSync(data).mode & 0o777).toBe(0o700);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(data, 'operator-token')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(data, 'operator-token'), 'utf8')).toMatch(/^glop_/);
    // The VAPID key of Web Push, made once beside it (docs/design.md section 10.6).
    expect(run.stdout).toContain(`VAPID key       ${join(data, 'vapid-key.pem')} (made)`);
    expect(statSync(join(data, 'vapid-key.pem')).mode & 0o777).toBe(0o600);
  });

  it('keeps existing files as they are, says so, and exits 0 with the same fingerprint', async () => {
    const data = join(dir, 'twice');
    await keysInit({ GATELINK_DATA_DIR: data });
    const keyBefore = readFileSync(join(data, 'signing-key.pem'), 'utf8');
    const tokenBefore = readFileSync(join(data, 'operator-token'), 'utf8');

    const again = await keysInit({ GATELINK_DATA_DIR: data }, '--json');

    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(join(data, 'signing-key.pem'), 'utf8')).toBe(keyBefore);
    expect(readFileSync(join(data, 'operator-token'), 'utf8')).toBe(tokenBefore);
    const answer = JSON.parse(again.stdout) as {
      service_key: { made: boolean; fingerprint: string };
      operator_token: { made: boolean };
    };
    expect(answer.service_key.made).toBe(false);
    expect(answer.operator_token.made).toBe(false);
    expect(answer.service_key.fingerprint).toBe(SigningKey.fromPem(keyBefore).publicKey.fingerprint);
    const text = await keysInit({ GATELINK_DATA_DIR: data });
    expect(text.stdout).toMatch(
      /^Nothing made: the service key, the VAPID key and the operator token exist already\./,
    );
  });

  it('writes the key where SIGNING_KEY_FILE says, and no token file when OPERATOR_TOKEN gives the token', async () => {
    const data = join(dir, 'named');
    const keyFile = join(dir, 'etc', 'gatelink', 'signing-key.pem');
    const run = await keysInit({
      GATELINK_DATA_DIR: data,
      SIGNING_KEY_FILE: keyFile,
      OPERATOR_TOKEN: 'an-operator-token-of-24-characters',
    });

    expect(run.code, run.stderr).toBe(0);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'etc', 'gatelink')).mode & 0o777).toBe(0o700);
    expect(run.stdout).toContain('Operator token  from OPERATOR_TOKEN (no file made)');
    expect(() => statSync(join(data, 'operator-token'))).toThrow();
  });

  it('prepares what a production cloud then starts with', async () => {
    const data = join(dir, 'production');
    const init = await keysInit({ GATELINK_DATA_DIR: data });
    expect(init.code, init.stderr).toBe(0);

    const cloud = await startCloudProcess({
      NODE_ENV: 'production',
      GATELINK_DATA_DIR: data,
      BASE_URL: 'https://gate.example.com',
      SMTP_URL: 'smtp://127.0.0.1:1',
      MQTT_PUBLIC_URL: 'mqtts://gate.example.com:8883',
      ...(database?.url ? { DATABASE_URL: database.url } : { GATELINK_ALLOW_EMBEDDED_DATABASE: '1' }),
    });
    try {
      const served = await fetch(new URL('/.well-known/service.json', recordedAddress(data)!.url));
      const key = SigningKey.fromPem(readFileSync(join(data, 'signing-key.pem'), 'utf8'));
      expect(await served.json()).toEqual({ key: key.publicKey.base64 });
    } finally {
      expect(await cloud.stop()).toBe(0);
    }
  });
});
