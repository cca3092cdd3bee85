import type { Host, Lab } from './network.js';
import { admin, type CloudSettings } from './server-host.js';

/**
 * A server's backup as the operator takes it, `gatelink-admin backup <folder>` on the server (the database in
 * pg_dump's custom format, the service key, the operator token), and its restore onto a fresh host's empty
 * database and data folder, before that host's cloud first starts.
 */
export async function backupServer(
  lab: Lab,
  server: { host: Host; settings: CloudSettings },
  folder: string,
): Promise<string> {
  return admin(lab, server.host, server.settings, ['backup', folder]);
}

export function restoreServer(
  lab: Lab,
  host: Host,
  settings: CloudSettings,
  folder: string,
): Promise<string> {
  return admin(lab, host, settings, ['restore', folder]);
}
