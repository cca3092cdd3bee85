import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * Instances on one database sign with one service key (cloud/README.md, "The data folder"): the database keeps
 * the first key it met, and an instance with another refuses to start rather than sign what nothing verifies.
 */

let dir: string;
let database: TestDatabase;
const first = SigningKey.generate();
const other = SigningKey.generate();
const clouds: TestCloud[] = [];

function keyFile(name: string, key: SigningKey): string {
  const file = join(dir, name);
  writeFileSync(file, key.toPem(), { mode: 0o600 });
  return file;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatelink-key-record-'));
  database = await createTestDatabase();
});

afterAll(async () => {
  for (const cloud of clouds) await cloud.stop();
  await database?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the service key a database was made with', () => {
  it('lets a second instance with the same key file start', async () => {
    const file = keyFile('first.pem', first);
    clouds.push(await startTestCloud({ database, env: { SIGNING_KEY_FILE: file } }));
    clouds.push(await startTestCloud({ database, env: { SIGNING_KEY_FILE: keyFile('copy.pem', first) } }));

    expect(clouds[1]!.ctx.serviceKey.publicKey.base64).toBe(first.publicKey.base64);
  });

  it('refuses an instance with another key in one line naming its file and both fingerprints', async () => {
    const file = keyFile('other.pem', other);

    const start = startTestCloud({ database, env: { SIGNING_KEY_FILE: file } });

    await expect(start).rejects.toThrow(
      `the service key in ${file} is not the one this database was made with (fingerprint ${other.publicKey.fingerprint}, expected ${first.publicKey.fingerprint}): copy the first instance's key file there (SIGNING_KEY_FILE)`,
    );
  });
});
