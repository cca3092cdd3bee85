import { resolve } from 'node:path';
import { ConfigError, loadCloudConfig } from '../../foundation/config.js';
import { backUp } from './backup.js';
import { BackupError, type Manifest } from './manifest.js';
import { restore } from './restore.js';

/**
 * `gatelink-admin backup <folder>` and `restore <folder>`: they run on the cloud's machine, as the cloud's user,
 * with the cloud's environment, and read it as the cloud does (loadCloudConfig), so they find the same
 * database, service key and operator token. They need no running cloud, and no operator API.
 */
export interface LocalCommand {
  name: string;
  args: string;
  help: string;
  run(folder: string, env: NodeJS.ProcessEnv): Promise<{ answer: Manifest; text: string }>;
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
    `  operator token ${manifest.operator_token === 'environment' ? 'in OPERATOR_TOKEN (keep your environment file)' : manifest.operator_token}`,
  ];
}

export const LOCAL_COMMANDS: readonly LocalCommand[] = [
  {
    name: 'backup',
    args: 'FOLDER',
    help: "on the cloud's machine: the database, service key and operator token into a new folder",
    async run(folder, env) {
      const answer = await backUp(configFrom(env), resolve(folder), new Date());
      return { answer, text: [`Backed up into ${resolve(folder)}:`, ...summary(answer)].join('\n') };
    },
  },
  {
    name: 'restore',
    args: 'FOLDER',
    help: 'onto an empty database and a data folder without a service key',
    async run(folder, env) {
      const answer = await restore(configFrom(env), resolve(folder));
      const next = 'Start the cloud: it publishes the same service key, and controllers connect as before.';
      return { answer, text: [`Restored from ${resolve(folder)}:`, ...summary(answer), next].join('\n') };
    },
  },
];

export function findLocalCommand(words: readonly string[]): LocalCommand | undefined {
  return LOCAL_COMMANDS.find((command) => command.name === words[0]);
}
