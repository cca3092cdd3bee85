import { resolve } from 'node:path';
import { ConfigError, loadCloudConfig } from '../../foundation/config.js';
import { type Row, UsageError } from '../operator-client.js';
import { backUp } from './backup.js';
import { BackupError, type Manifest } from './manifest.js';
import { restore } from './restore.js';

/**
 * `gatelink-admin backup <folder>` and `restore <folder>`, two local commands of the admin table (../commands.ts):
 * they run on the cloud's machine, as the cloud's user, with the cloud's environment, and read it as the cloud does
 * (loadCloudConfig), so they find the same database, service key and operator token. They need no running cloud,
 * and no operator API.
 */
export interface FolderCommandOutput {
  answer: Row;
  text(): string;
}

function configFrom(env: NodeJS.ProcessEnv) {
  try {
    return loadCloudConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) throw new BackupError(error.message);
    throw error;
  }
}

function summary(manifest: Manifest): string[] {
  return [
    `  made          ${manifest.created_at} by release ${manifest.release.version}`,
    `  database      ${manifest.database}${manifest.release.latest_migration ? `, migrated to ${manifest.release.latest_migration}` : ''}`,
    `  service key   ${manifest.service_key.fingerprint}`,
    `  VAPID key     ${manifest.vapid_key === 'file' ? 'file' : 'none (the cloud had not made one)'}`,
    `  operator token ${manifest.operator_token === 'environment' ? 'in OPERATOR_TOKEN (keep your environment file)' : manifest.operator_token}`,
  ];
}

export async function backupInto(
  folder: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<FolderCommandOutput> {
  const into = resolve(needFolder(folder, 'backup'));
  const answer = await backUp(configFrom(env), into, new Date());
  return { answer: { ...answer }, text: () => [`Backed up into ${into}:`, ...summary(answer)].join('\n') };
}

export async function restoreFrom(
  folder: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<FolderCommandOutput> {
  const from = resolve(needFolder(folder, 'restore'));
  const answer = await restore(configFrom(env), from);
  const next = 'Start the cloud: it publishes the same service key, and controllers connect as before.';
  return {
    answer: { ...answer },
    text: () => [`Restored from ${from}:`, ...summary(answer), next].join('\n'),
  };
}

function needFolder(folder: string | undefined, command: string): string {
  if (!folder)
    throw new UsageError(
      `${command} needs a folder, such as: gatelink-admin ${command} /var/backups/gatelink/1`,
    );
  return folder;
}
