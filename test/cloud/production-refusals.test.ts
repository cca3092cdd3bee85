import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCloudConfig } from '../../cloud/foundation/config.js';
import { productionRefusals } from '../../cloud/foundation/production-refusals.js';
import { makeVapidKey } from '../../cloud/rules/vapid-key/vapid-key-file.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { runCloudToExit } from '../support/cloud-process.js';

/**
 * What production refuses to start with (cloud/README.md, "Running in production"): every refusal at once, one
 * line each naming the setting, and an exit status that is not 0. Outside production, nothing of it applies.
 */

let dir: string;
let keyFile: string;
let vapidKeyFile: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gatelink-refusals-'));
  keyFile = join(dir, 'signing-key.pem');
  writeFileSync(keyFile, SigningKey.generate().toPem(), { mode: 0o600 });
  vapidKeyFile = join(dir, 'vapid-key.pem');
  makeVapidKey(vapidKeyFile);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A production configuration with everything right, `change` applied over it. */
function production(change: Record<string, string | undefined> = {}) {
  const env: Record<string, string | undefined> = {
    NODE_ENV: 'production',
    GATELINK_DATA_DIR: join(dir, 'data'),
    BASE_URL: 'https://gate.example.com',
    DATABASE_URL: 'postgres://gatelink@db.example.com/gatelink',
    SMTP_URL: 'smtps://gate:secret@mail.example.com:465',
    SIGNING_KEY_FILE: keyFile,
    VAPID_KEY_FILE: vapidKeyFile,
    MQTT_PUBLIC_URL: 'mqtts://gate.example.com:8883',
    ...change,
  };
  return productionRefusals(loadCloudConfig(env));
}

describe('production refusals, one per unsafe setting', () => {
  it('accepts a configuration with everything right', () => {
    expect(production()).toEqual([]);
  });

  it('refuses BASE_URL unset, and BASE_URL over http', () => {
    expect(production({ BASE_URL: undefined })).toEqual([
      expect.stringMatching(/^BASE_URL is unset: set it/),
    ]);
    expect(production({ BASE_URL: 'http://gate.example.com' })).toEqual([
      expect.stringMatching(/^BASE_URL=http:\/\/gate.example.com is not https/),
    ]);
  });

  it('refuses the embedded database unless GATELINK_ALLOW_EMBEDDED_DATABASE=1 says it is meant', () => {
    expect(production({ DATABASE_URL: undefined })).toEqual([
      expect.stringMatching(/^DATABASE_URL is unset.*GATELINK_ALLOW_EMBEDDED_DATABASE=1/),
    ]);
    expect(production({ DATABASE_URL: undefined, GATELINK_ALLOW_EMBEDDED_DATABASE: '1' })).toEqual([]);
  });

  it('refuses SMTP_URL unset, since sign-in codes would go to the log', () => {
    expect(production({ SMTP_URL: undefined })).toEqual([expect.stringMatching(/^SMTP_URL is unset/)]);
  });

  it('refuses a missing service key file, naming it and keys init', () => {
    const missing = join(dir, 'nowhere', 'signing-key.pem');
    expect(production({ SIGNING_KEY_FILE: missing })).toEqual([
      `the service key file ${missing} does not exist (SIGNING_KEY_FILE): make it once with "gatelink-admin keys init", or copy the first instance's key file there`,
    ]);
  });

  it('refuses a missing VAPID key file, naming it and keys init', () => {
    const missing = join(dir, 'nowhere', 'vapid-key.pem');
    expect(production({ VAPID_KEY_FILE: missing })).toEqual([
      `the VAPID key file ${missing} does not exist (VAPID_KEY_FILE): make it once with "gatelink-admin keys init", or copy the first instance's key file there`,
    ]);
  });

  it('[attack:config.test-switch-in-production] refuses the test switches', () => {
    expect(
      production({
        GATELINK_DEV_KEYFILE_URL: 'http://127.0.0.1:9000/{domain}/.well-known/service.json',
        GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1',
      }),
    ).toEqual([
      expect.stringMatching(/^GATELINK_DEV_KEYFILE_URL is set but NODE_ENV=production/),
      expect.stringMatching(/^GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS=1 is set but NODE_ENV=production/),
    ]);
  });

  it('refuses nothing outside production, as npm start and the tests run', () => {
    expect(productionRefusals(loadCloudConfig({ GATELINK_DATA_DIR: join(dir, 'dev') }))).toEqual([]);
  });
});

describe('npm run cloud in production with everything wrong', { timeout: 60_000 }, () => {
  it('prints every refusal at once, one line each, and exits with status 2 before starting anything', async () => {
    const data = join(dir, 'wrong');
    const run = await runCloudToExit({
      NODE_ENV: 'production',
      GATELINK_DATA_DIR: data,
      BASE_URL: 'http://gate.example.com',
      GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS: '1',
    });

    expect(run.started).toBe(false);
    expect(run.code).toBe(2);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/^gatelink cloud: BASE_URL=http:\/\/gate.example.com is not https/),
      expect.stringMatching(/^gatelink cloud: DATABASE_URL is unset/),
      expect.stringMatching(/^gatelink cloud: SMTP_URL is unset/),
      `gatelink cloud: the service key file ${join(data, 'signing-key.pem')} does not exist (SIGNING_KEY_FILE): make it once with "gatelink-admin keys init", or copy the first instance's key file there`,
      `gatelink cloud: the VAPID key file ${join(data, 'vapid-key.pem')} does not exist (VAPID_KEY_FILE): make it once with "gatelink-admin keys init", or copy the first instance's key file there`,
      expect.stringMatching(/^gatelink cloud: GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS=1 is set/),
      expect.stringMatching(
        /^gatelink cloud: the embedded broker would hand controllers plain mqtt:\/\/gate.example.com:/,
      ),
    ]);
  });
});
