import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CloudConfig } from '../../foundation/config.js';
import { OPERATOR_TOKEN_FILE } from '../../rules/operators/operator-token-file.js';
import { BACKUP_FILES, BackupError, type Manifest, readManifest } from './manifest.js';
import { restoreDatabase, tablesIn } from './postgres-tools.js';

/**
 * `gatelink-admin restore <folder>` (deploy/README.md, "Restoring"): a backup onto an empty database and a data
 * folder without a service key, wherever the configuration puts them. It never overwrites: a database with
 * tables, or a key already in place, is someone's data, and the refusal says which.
 */
export async function restore(config: CloudConfig, folder: string): Promise<Manifest> {
  const manifest = readManifest(folder);
  const tokenFile = join(config.dataDir, OPERATOR_TOKEN_FILE);
  if (existsSync(config.serviceKeyFile)) {
    throw new BackupError(
      `a service key is already at ${config.serviceKeyFile}: restore onto a data folder without one (move it away first if it is not needed)`,
    );
  }
  if (manifest.operator_token === 'file' && existsSync(tokenFile)) {
    throw new BackupError(`an operator token is already at ${tokenFile}: move it away first`);
  }
  if (manifest.vapid_key === 'file' && existsSync(config.vapidKeyFile)) {
    throw new BackupError(
      `a VAPID key is already at ${config.vapidKeyFile}: restore onto a data folder without one (move it away first)`,
    );
  }
  await restoreDatabaseOf(config, folder, manifest);
  mkdirSync(dirname(config.serviceKeyFile), { recursive: true, mode: 0o700 });
  copyFileSync(join(folder, BACKUP_FILES.serviceKey), config.serviceKeyFile);
  chmodSync(config.serviceKeyFile, 0o600);
  if (manifest.vapid_key === 'file') {
    mkdirSync(dirname(config.vapidKeyFile), { recursive: true, mode: 0o700 });
    copyFileSync(join(folder, BACKUP_FILES.vapidKey), config.vapidKeyFile);
    chmodSync(config.vapidKeyFile, 0o600);
  }
  if (manifest.operator_token === 'file') {
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    copyFileSync(join(folder, BACKUP_FILES.operatorToken), tokenFile);
    chmodSync(tokenFile, 0o600);
  }
  return manifest;
}

async function restoreDatabaseOf(config: CloudConfig, folder: string, manifest: Manifest): Promise<void> {
  if ('url' in config.database) {
    if (manifest.database !== 'postgres') {
      throw new BackupError(
        'this backup holds an embedded database: unset DATABASE_URL to restore it into GATELINK_DATA_DIR',
      );
    }
    const tables = await tablesIn(config.database.url);
    if (tables > 0) {
      throw new BackupError(
        `the database of DATABASE_URL is not empty (${tables} tables): restore into a new, empty database (createdb)`,
      );
    }
    await restoreDatabase(config.database.url, join(folder, BACKUP_FILES.postgresDump));
    return;
  }
  if (!('dataDir' in config.database) || manifest.database !== 'embedded') {
    throw new BackupError('this backup holds a PostgreSQL database: set DATABASE_URL to an empty database');
  }
  const target = config.database.dataDir;
  if (existsSync(target) && readdirSync(target).length > 0) {
    throw new BackupError(
      `an embedded database is already at ${target}: restore into a new GATELINK_DATA_DIR`,
    );
  }
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  cpSync(join(folder, BACKUP_FILES.embeddedDatabase), target, { recursive: true });
}
