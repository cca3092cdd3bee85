import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type ProvisionedBoard, provisionedBoard } from './board-opening.js';
import type { TestCloud } from './cloud.js';
import { type ProgramRun, runProgram } from './program-run.js';
import type { ReleaseTree } from './release-home.js';
import { type Supervisor, startSupervisor } from './supervisor.js';

/**
 * The operator's and the installer's programs as the update suites run them (docs/design.md section 12.4):
 * `gatelink-admin` against a test cloud, `packaging/device-release.mjs` packing a tree, and a controller in its
 * own home, provisioned with `gatelink-device provision` and run through the boot guard of `known-good` by a
 * supervisor standing in for systemd. `node` is the command line that runs Node.js (the arm64 one under
 * qemu-user, for instance); by default this process's.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const ADMIN = resolve(ROOT, 'bin/gatelink-admin.mjs');
const PACKER = resolve(ROOT, 'packaging/device-release.mjs');

const OBJECTS_YAML = `objects:
  - {id: gate, label: Main gate, kind: simulated, pulse_ms: 0}
clock:
  check: none
`;

/** `gatelink-admin <args>` with the cloud's address and operator token; none of this machine's settings. */
export function admin(cloud: TestCloud | null, args: string[]): Promise<ProgramRun> {
  const { OPERATOR_TOKEN: _token, GATELINK_URL: _url, ...env } = process.env;
  const connection = cloud ? ['--url', cloud.baseUrl, '--token', cloud.operatorToken] : [];
  return runProgram([ADMIN, ...connection, ...args], { cwd: ROOT, env });
}

/** A program's run that must have succeeded; its output otherwise. */
export function succeeded(run: ProgramRun): ProgramRun {
  if (run.code !== 0) throw new Error(`exited ${run.code}: ${run.stderr}${run.stdout}`);
  return run;
}

/** `release keygen` into `dir`: the key file and the public key the cloud is given as RELEASE_PUBLIC_KEY. */
export async function releaseKeygen(dir: string): Promise<{ keyFile: string; publicKey: string }> {
  const keyFile = join(dir, 'release-key.pem');
  const made = succeeded(await admin(null, ['release', 'keygen', '--out', keyFile]));
  const publicKey = /RELEASE_PUBLIC_KEY=(\S+):/.exec(made.stdout)?.[1];
  if (!publicKey) throw new Error(`no public key in: ${made.stdout}`);
  return { keyFile, publicKey };
}

/** Packs `tree` with the packer, signs it with `release sign`; returns the bundle file. */
export async function packAndSign(tree: ReleaseTree, dir: string, keyFile: string): Promise<string> {
  const bundle = join(dir, `gatelink-device-${tree.version}.tar.gz`);
  succeeded(
    await runProgram([PACKER, '--tree', tree.folder, '--out', bundle], { cwd: ROOT, env: process.env }),
  );
  succeeded(await admin(null, ['release', 'sign', bundle, '--key', keyFile]));
  return bundle;
}

/** `release upload`; returns the release's id. */
export async function uploadRelease(cloud: TestCloud, bundle: string): Promise<number> {
  const run = succeeded(await admin(cloud, ['release', 'upload', bundle]));
  return Number(/Release (\d+) stored/.exec(run.stdout)?.[1]);
}

/** `rollout start <release> <flags>`; returns the rollout's id. */
export async function startRollout(cloud: TestCloud, release: number, flags: string[]): Promise<number> {
  const run = succeeded(await admin(cloud, ['rollout', 'start', String(release), ...flags]));
  return Number(/Rollout (\d+)/.exec(run.stdout)?.[1]);
}

export interface GuardedController {
  board: ProvisionedBoard;
  /** The config file `provision` wrote. */
  config: string;
  home: string;
  supervisor: Supervisor;
}

/**
 * Provisions a controller whose home (made with makeHome) is `home`, with its config beside it in `dir`, through
 * the `gatelink-device` of its current release, then starts its boot guard under the supervisor.
 */
export async function startGuardedController(
  cloud: TestCloud,
  dir: string,
  home: string,
  options: { label: string; node?: string[]; timeoutMs?: number },
): Promise<GuardedController> {
  const node = options.node ?? [process.execPath];
  const added = await cloud.ops('POST', '/ops/devices', { label: options.label });
  const { provisioning_code: code } = added.body.device as { provisioning_code: string };
  const configDir = join(dir, 'etc');
  mkdirSync(configDir, { recursive: true });
  writeFileSync(join(configDir, 'objects.yaml'), OBJECTS_YAML);
  const config = join(configDir, 'device.yaml');
  const [command = process.execPath, ...prefix] = node;
  const provision = [
    join(home, 'current', 'bin', 'gatelink-device.mjs'),
    'provision',
    ...['--cloud', cloud.baseUrl, '--code', code, '--config', config],
    ...['--objects-from', join(configDir, 'objects.yaml')],
  ];
  const provisioned = succeeded(await runCommand(command, [...prefix, ...provision], options.timeoutMs));
  const board = provisionedBoard(provisioned.stdout);
  const guard = [join(home, 'known-good', 'bin', 'gatelink-boot.mjs'), '--home', home];
  const supervisor = startSupervisor(command, [...prefix, ...guard, 'run', '--config', config], {
    env: { ...process.env, NOTIFY_SOCKET: '', WATCHDOG_USEC: '' },
  });
  return { board, config, home, supervisor };
}

function runCommand(command: string, args: string[], timeoutMs = 60_000): Promise<ProgramRun> {
  return new Promise((done) => {
    execFile(command, args, { cwd: ROOT, timeout: timeoutMs }, (error, stdout, stderr) => {
      done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr: `${stderr}${error?.message ?? ''}` });
    });
  });
}

/** The operator's view of the fleet (`/ops/devices`), as `device list` prints it. */
export interface FleetDevice {
  id: string;
  online: boolean;
  version: string | null;
  arch: string | null;
  update: { rollout_id: number; state: string; reason?: string | null; version?: string } | null;
}

export async function fleet(cloud: TestCloud): Promise<FleetDevice[]> {
  return (await cloud.ops('GET', '/ops/devices')).body.devices as FleetDevice[];
}

/** What an operator's Prometheus scrapes at /metrics. */
export async function scrapeMetrics(cloud: TestCloud): Promise<string> {
  const response = await fetch(`${cloud.localUrl}/metrics`, {
    headers: { authorization: `Bearer ${cloud.operatorToken}` },
  });
  return response.text();
}
