import type { VerifyKey } from '../../shared/crypto/ed25519.js';
import { type UpdateCommand, type UpdateReason, verifyUpdateCommand } from '../../shared/protocol/updates.js';
import { compareVersions, verifyManifest } from '../../shared/releases/manifest.js';

/** What an update command is checked against. */
export interface UpdateCheckContext {
  deviceId: string;
  commandKey: VerifyKey;
  releaseKey: VerifyKey | null;
  /** The running version (device/version.ts). */
  version: string;
  arch: string;
  nodeAbi: string;
  /** The config's cloud_url: the bundle must come from its origin. */
  cloudUrl: string;
  updating: boolean;
  received: number;
}

type Check = (command: UpdateCommand, context: UpdateCheckContext) => UpdateReason | null;

/**
 * The checks of docs/design.md section 12.4.3, in order; the first that fails is the refusal reason. The
 * command's own signature before anything that trusts its content; the release's signature before its fields.
 */
const CHECKS: readonly Check[] = [
  (command, c) => (command.device_id === c.deviceId ? null : 'wrong_device'),
  (command, c) => (verifyUpdateCommand(c.commandKey, command) ? null : 'bad_signature'),
  (command, c) => (c.received > command.expires_at ? 'expired' : null),
  (_command, c) => (c.releaseKey === null ? 'no_release_key' : null),
  (command, c) =>
    c.releaseKey !== null && verifyManifest(c.releaseKey, command.release) ? null : 'bad_release_signature',
  (command, c) => (command.release.manifest.arch === c.arch ? null : 'wrong_arch'),
  (command, c) => (command.release.manifest.node_abi === c.nodeAbi ? null : 'wrong_node'),
  (command, c) => versionCheck(command, c.version),
  (command, c) => (sameOrigin(command.url, c.cloudUrl) ? null : 'foreign_url'),
  (_command, c) => (c.updating ? 'busy_updating' : null),
];

export function checkUpdateCommand(command: UpdateCommand, context: UpdateCheckContext): UpdateReason | null {
  for (const check of CHECKS) {
    const reason = check(command, context);
    if (reason) return reason;
  }
  return null;
}

function versionCheck(command: UpdateCommand, running: string): UpdateReason | null {
  let order: number;
  try {
    order = compareVersions(command.release.manifest.version, running);
  } catch {
    // A running version that is not a release version (a development tree): any signed release is newer.
    return null;
  }
  if (order === 0) return 'same_version';
  if (order < 0 && !command.allow_downgrade) return 'older_version';
  return null;
}

function sameOrigin(url: string, cloudUrl: string): boolean {
  try {
    return new URL(url).origin === new URL(cloudUrl).origin;
  } catch {
    return false;
  }
}
