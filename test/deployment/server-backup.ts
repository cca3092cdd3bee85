import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Host, Lab } from './network.js';
import type { CloudSettings } from './server-host.js';
import { admin, features, postgresBin } from './server-host.js';

/**
 * A server's backup as the operator takes it: with `gatelink-admin backup <folder>` once the admin tool has it,
 * else by hand with the same parts: the database in pg_dump's custom format, the service key and the operator
 * token. Restoring puts them back on a fresh host before its cloud first starts.
 */
const KEY_FILES = ['signing-key.pem', 'operator-token'];
const DUMP = 'database.dump';

export async function backupServer(
  lab: Lab,
  server: { host: Host; settings: CloudSettings },
  folder: string,
): Promise<void> {
  if (features.adminBackup) {
    await admin(lab, server.host, server.settings, ['backup', folder]);
    return;
  }
  mkdirSync(folder, { recursive: true });
  const url = new URL(server.settings.databaseUrl);
  await lab.exec(server.host, join(postgresBin()!, 'pg_dump'), [
    '--format=custom',
    `--file=${join(folder, DUMP)}`,
    `--host=${url.hostname}`,
    `--port=${url.port}`,
    `--username=${url.username}`,
    url.pathname.slice(1),
  ]);
  for (const name of KEY_FILES) copyFileSync(join(server.settings.dataDir, name), join(folder, name));
}

export async function restoreServer(
  lab: Lab,
  host: Host,
  settings: CloudSettings,
  folder: string,
): Promise<void> {
  if (features.adminBackup) {
    await admin(lab, host, settings, ['restore', folder]);
    return;
  }
  const url = new URL(settings.databaseUrl);
  await lab.exec(host, join(postgresBin()!, 'pg_restore'), [
    '--no-owner',
    '--exit-on-error',
    `--host=${url.hostname}`,
    `--port=${url.port}`,
    `--username=${url.username}`,
    `--dbname=${url.pathname.slice(1)}`,
    join(folder, DUMP),
  ]);
  for (const name of KEY_FILES) {
    if (existsSync(join(folder, name))) copyFileSync(join(folder, name), join(settings.dataDir, name));
  }
}
