import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * What a backup folder says about itself (deploy/README.md, "Backups"): when it was made, by which release,
 * which database it holds and the fingerprint of the service key beside it, so an operator can tell two
 * backups apart and see that a restored cloud publishes the same key.
 */
export const MANIFEST_FILE = 'manifest.json';

/** The files a backup folder may hold, by what they are. */
export const BACKUP_FILES = {
  /** `pg_dump --format=custom` of the PostgreSQL database. */
  postgresDump: 'database.pgdump',
  /** A copy of the stopped embedded database's folder. */
  embeddedDatabase: 'embedded-db',
  serviceKey: 'signing-key.pem',
  /** The key Web Push is signed with (docs/design.md section 10.6): a new one would end every subscription. */
  vapidKey: 'vapid-key.pem',
  operatorToken: 'operator-token',
} as const;

export const manifestSchema = z.object({
  format: z.literal(1),
  created_at: z.string(),
  release: z.object({
    version: z.string(),
    /** The newest migration the database had run: a restore needs a release that knows it. */
    latest_migration: z.string().nullable(),
  }),
  database: z.enum(['postgres', 'embedded']),
  service_key: z.object({ fingerprint: z.string(), public_key: z.string() }),
  /** `file`: copied beside; `environment`: set by OPERATOR_TOKEN, which stays in the environment file. */
  operator_token: z.enum(['file', 'environment', 'none']),
  /**
   * `file`: the VAPID key copied beside; `none`: the cloud had none yet. Absent from backups made before
   * notifications, which read as `none`: the format stays 1, as every older field means what it meant.
   */
  vapid_key: z.enum(['file', 'none']).default('none'),
});

export type Manifest = z.infer<typeof manifestSchema>;

export function writeManifest(folder: string, manifest: Manifest): void {
  writeFileSync(join(folder, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, {
    mode: 0o600,
    flag: 'wx',
  });
}

/** The folder's manifest, or an error naming what is wrong with the folder. */
export function readManifest(folder: string): Manifest {
  let text: string;
  try {
    text = readFileSync(join(folder, MANIFEST_FILE), 'utf8');
  } catch {
    throw new BackupError(`${folder} is not a backup: it has no ${MANIFEST_FILE}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new BackupError(`${join(folder, MANIFEST_FILE)} is not JSON: the backup is damaged`);
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    throw new BackupError(`${join(folder, MANIFEST_FILE)} is not a manifest this release reads`);
  }
  return parsed.data;
}

/** A refusal or failure of backup or restore, said in one line to the operator. */
export class BackupError extends Error {
  override name = 'BackupError';
}
