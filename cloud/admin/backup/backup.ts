import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SigningKey } from '../../../shared/crypto/ed25519.js';
import type { CloudConfig } from '../../foundation/config.js';
import { lockDataFolder } from '../../foundation/data-folder.js';
import { MIGRATION_TABLES } from '../../foundation/db/database.js';
import { OPERATOR_TOKEN_FILE } from '../../rules/operators/operator-token-file.js';
import { readVapidKey } from '../../rules/vapid-key/vapid-key-file.js';
import { BACKUP_FILES, BackupError, type Manifest, writeManifest } from './manifest.js';
import { dumpDatabase, latestMigration } from './postgres-tools.js';
import { releaseVersion } from './release.js';

/**
 * `gatelink-admin backup <folder>` (deploy/README.md, "Backups"): what a cloud cannot be rebuilt without, into
 * a new folder of the operator's alone. The database (every company, customer, access key, device account and
 * the journal), the service key (controllers pinned it at provisioning and companies verify webhooks with it:
 * a new one would orphan them all) and the operator token. Not kept: logs, and the embedded broker's state,
 * which controllers rebuild when they reconnect.
 */
export async function backUp(config: CloudConfig, folder: string, now: Date): Promise<Manifest> {
  const serviceKey = readServiceKey(config.serviceKeyFile);
  makeBackupFolder(folder);
  const database = 'url' in config.database ? await backUpPostgres(config.database.url, folder) : null;
  if (!database) backUpEmbedded(config, folder);
  copyFileSync(config.serviceKeyFile, join(folder, BACKUP_FILES.serviceKey));
  const vapidKey = backUpVapidKey(config, folder);
  const operatorToken = backUpOperatorToken(config, folder);
  const manifest: Manifest = {
    format: 1,
    created_at: now.toISOString(),
    release: { version: releaseVersion(), latest_migration: database?.latestMigration ?? null },
    database: database ? 'postgres' : 'embedded',
    service_key: { fingerprint: serviceKey.publicKey.fingerprint, public_key: serviceKey.publicKey.base64 },
    operator_token: operatorToken,
    vapid_key: vapidKey,
  };
  writeManifest(folder, manifest);
  privateFiles(folder);
  return manifest;
}

/**
 * The VAPID key beside the service key, when the cloud has made one: the customers' browsers subscribed with
 * its public half, so a restored cloud with another key would reach none of them (docs/design.md section 10.6).
 */
function backUpVapidKey(config: CloudConfig, folder: string): Manifest['vapid_key'] {
  if (!existsSync(config.vapidKeyFile)) return 'none';
  try {
    readVapidKey(config.vapidKeyFile);
  } catch (error) {
    throw new BackupError(`${error instanceof Error ? error.message : String(error)}: check VAPID_KEY_FILE`);
  }
  copyFileSync(config.vapidKeyFile, join(folder, BACKUP_FILES.vapidKey));
  return 'file';
}

function readServiceKey(file: string): SigningKey {
  if (!existsSync(file)) {
    throw new BackupError(
      `no service key at ${file}: set SIGNING_KEY_FILE (or GATELINK_DATA_DIR) as the cloud has them`,
    );
  }
  try {
    return SigningKey.fromPem(readFileSync(file, 'utf8'));
  } catch {
    throw new BackupError(`${file} is not an Ed25519 private key in PEM: check SIGNING_KEY_FILE`);
  }
}

/** A new folder, or an empty one: a backup never mixes with another's files. */
function makeBackupFolder(folder: string): void {
  if (existsSync(folder) && readdirSync(folder).length > 0) {
    throw new BackupError(`${folder} is not empty: give each backup a new folder`);
  }
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  chmodSync(folder, 0o700);
}

async function backUpPostgres(url: string, folder: string): Promise<{ latestMigration: string | null }> {
  await dumpDatabase(url, join(folder, BACKUP_FILES.postgresDump));
  return { latestMigration: await latestMigration(url, MIGRATION_TABLES.migrations) };
}

/**
 * The embedded database is files in the data folder that one process writes: copied only while no cloud runs
 * on the folder, which holding its lock for the copy guarantees.
 */
function backUpEmbedded(config: CloudConfig, folder: string): void {
  const source = 'dataDir' in config.database ? config.database.dataDir : undefined;
  if (!source || !existsSync(source)) {
    throw new BackupError(
      'no database to back up: set DATABASE_URL, or GATELINK_DATA_DIR as the cloud has it',
    );
  }
  let lock: { release(): void };
  try {
    lock = lockDataFolder(config.dataDir, 'gatelink-admin backup');
  } catch (error) {
    throw new BackupError(
      `${error instanceof Error ? error.message : String(error)} (the embedded database is backed up stopped)`,
    );
  }
  try {
    cpSync(source, join(folder, BACKUP_FILES.embeddedDatabase), { recursive: true });
  } finally {
    lock.release();
  }
}

function backUpOperatorToken(config: CloudConfig, folder: string): Manifest['operator_token'] {
  if (config.operatorToken) return 'environment';
  const file = join(config.dataDir, OPERATOR_TOKEN_FILE);
  if (!existsSync(file)) return 'none';
  copyFileSync(file, join(folder, BACKUP_FILES.operatorToken));
  return 'file';
}

/** Every file of the backup its owner's alone: it holds the service key and a whole database. */
function privateFiles(folder: string): void {
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    chmodSync(path, entry.isDirectory() ? 0o700 : 0o600);
  }
}
