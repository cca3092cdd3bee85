import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backUp } from '../../cloud/admin/backup/backup.js';
import { restore } from '../../cloud/admin/backup/restore.js';
import { loadCloudConfig } from '../../cloud/foundation/config.js';
import { openDatabase } from '../../cloud/foundation/db/database.js';
import { makeVapidKey, readVapidKey } from '../../cloud/rules/vapid-key/vapid-key-file.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';

/**
 * The embedded database's backup (deploy/README.md, "Backups"): its folder copied while no cloud runs on the
 * data folder, with the service key and the operator token, and restored into another data folder where the
 * same customers are found and the same key is read. A cloud that holds the folder stops the backup with the
 * line naming it.
 */
const folders: string[] = [];
let dataDir: string;
let key: SigningKey;

async function folder(name: string): Promise<string> {
  const made = await mkdtemp(join(tmpdir(), `gatelink-${name}-`));
  folders.push(made);
  return made;
}

const config = (dir: string) => loadCloudConfig({ GATELINK_DATA_DIR: dir, LOG_LEVEL: 'silent' });

beforeAll(async () => {
  dataDir = await folder('embedded');
  key = SigningKey.generate();
  await writeFile(join(dataDir, 'signing-key.pem'), key.toPem(), { mode: 0o600 });
  await writeFile(join(dataDir, 'operator-token'), `glop_${'e'.repeat(43)}\n`, { mode: 0o600 });
  makeVapidKey(join(dataDir, 'vapid-key.pem'));
  const handle = await openDatabase({ dataDir: join(dataDir, 'db') });
  await sql`insert into customers (display_name) values ('Embedded Ada')`.execute(handle.db);
  await handle.close();
}, 120_000);

afterAll(async () => {
  for (const made of folders) await rm(made, { recursive: true, force: true });
});

describe('the embedded database', () => {
  it('is backed up stopped and restored into another data folder', async () => {
    const backup = join(await folder('backup'), 'one');
    const manifest = await backUp(config(dataDir), backup, new Date('2026-11-26T03:00:00Z'));
    expect(manifest).toMatchObject({ database: 'embedded', operator_token: 'file', vapid_key: 'file' });
    expect(manifest.service_key.fingerprint).toBe(key.publicKey.fingerprint);
    expect((await readdir(backup)).sort()).toEqual([
      'embedded-db',
      'manifest.json',
      'operator-token',
      'signing-key.pem',
      'vapid-key.pem',
    ]);

    const restoredDir = await folder('restored');
    await restore(config(restoredDir), backup);
    // The browsers subscribed with this key's public half: the restored cloud signs with the same one.
    expect(readVapidKey(join(restoredDir, 'vapid-key.pem')).publicKey).toBe(
      readVapidKey(join(dataDir, 'vapid-key.pem')).publicKey,
    );
    const handle = await openDatabase({ dataDir: join(restoredDir, 'db') });
    try {
      const rows = await sql<{ display_name: string }>`select display_name from customers`.execute(handle.db);
      expect(rows.rows.map((row) => row.display_name)).toEqual(['Embedded Ada']);
    } finally {
      await handle.close();
    }
    await expect(restore(config(restoredDir), backup)).rejects.toThrow(
      `a service key is already at ${join(restoredDir, 'signing-key.pem')}`,
    );
  }, 120_000);

  it('is not copied while a cloud holds the data folder, and the line says which', async () => {
    const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const since = '2026-11-26T02:59:00.000Z';
      await writeFile(
        join(dataDir, 'cloud.pid'),
        JSON.stringify({ pid: holder.pid, started: null, since, command: 'npm run cloud' }),
      );
      const backup = join(await folder('busy'), 'one');
      await expect(backUp(config(dataDir), backup, new Date())).rejects.toThrow(
        `the data folder ${dataDir} is in use by process ${holder.pid} (npm run cloud, since ${since})`,
      );
    } finally {
      holder.kill();
      await rm(join(dataDir, 'cloud.pid'), { force: true });
    }
  });
});
