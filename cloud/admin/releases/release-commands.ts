import { createReadStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import {
  releaseManifestSchema,
  type SignedManifest,
  signedManifestSchema,
  signManifest,
} from '../../../shared/releases/manifest.js';
import type { AdminCommand, CommandInput, Flags } from '../commands.js';
import { call, type Row, table, UsageError, upload } from '../operator-client.js';
import { readBundle } from './release-bundle.js';
import { makeReleaseKey, readReleaseKey } from './release-key-file.js';

/**
 * `gatelink-admin release keygen` and `release sign` (docs/design.md section 12.4.1): the operator's offline
 * side of a release. Both work on files alone: no cloud, no database, no environment.
 */
export interface ReleaseOutput {
  answer: Row;
  text(): string;
}

export function releaseKeygen(out: string | undefined): ReleaseOutput {
  if (!out) throw new UsageError('release keygen needs --out FILE (a new file for the private key)');
  const key = makeReleaseKey(out);
  const answer: Row = { file: out, public_key: key.publicKey.base64, fingerprint: key.publicKey.fingerprint };
  const text = () =>
    [
      `Release key     ${out} (made, mode 0600: keep it off the cloud, and a copy somewhere safe)`,
      `  public key    ${key.publicKey.base64}`,
      `  fingerprint   ${key.publicKey.fingerprint}`,
      `Give the cloud RELEASE_PUBLIC_KEY=${key.publicKey.base64}: controllers provisioned from then on pin it.`,
    ].join('\n');
  return { answer, text };
}

/** The file `release sign` writes beside the bundle, and `release upload` sends with it. */
export function manifestFileOf(bundle: string): string {
  return `${bundle}.manifest.json`;
}

export async function releaseSign(
  bundle: string | undefined,
  keyFile: string | undefined,
  now: () => number = Date.now,
): Promise<ReleaseOutput> {
  if (!bundle) throw new UsageError('release sign needs the bundle: release sign BUNDLE --key FILE');
  if (!keyFile) throw new UsageError('release sign needs --key FILE (the release key from release keygen)');
  const key = readReleaseKey(keyFile);
  const facts = await readBundle(bundle);
  const manifest = releaseManifestSchema.parse({
    v: 1,
    ...facts.release,
    sha256: facts.sha256,
    size: facts.size,
    signed_at: now(),
  });
  const signed: SignedManifest = signManifest(key, manifest);
  const file = manifestFileOf(bundle);
  writeFileSync(file, `${JSON.stringify(signed, null, 2)}\n`);
  const answer: Row = { file, ...signed, fingerprint: key.publicKey.fingerprint };
  const text = () =>
    [
      `Signed ${manifest.name} ${manifest.version} for ${manifest.arch} (Node ABI ${manifest.node_abi})`,
      `  manifest      ${file}`,
      `  size          ${manifest.size} bytes`,
      `  sha256        ${manifest.sha256}`,
      `  key           ${key.publicKey.fingerprint}`,
      'Upload both to the cloud: release upload (the cloud checks the signature with RELEASE_PUBLIC_KEY).',
    ].join('\n');
  return { answer, text };
}

/**
 * `gatelink-admin release upload|list` and `rollout start|pause|resume|show|list` (docs/design.md section
 * 12.4.2): calls of the operator API of a running cloud. The bundle and its signed manifest are made offline
 * beforehand (`release sign`); the cloud refuses anything the release key did not sign.
 */
const RELEASE_COLUMNS = ['id', 'version', 'arch', 'node_abi', 'size', 'created_at'];
const ROLLOUT_COLUMNS = ['id', 'release_id', 'version', 'arch', 'target', 'state', 'counts', 'halted_reason'];

function rolloutId(input: CommandInput, command: string): number {
  const id = Number(input.arg);
  if (!Number.isSafeInteger(id) || id < 1)
    throw new UsageError(`${command} needs a rollout id, such as: ${command} 3`);
  return id;
}

/** The manifest file, read and checked here so that a wrong file is named before anything is sent. */
function manifestHeader(path: string): string {
  if (!existsSync(path))
    throw new UsageError(`no manifest at ${path}: sign the bundle first, or name it with --manifest`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new Error(`${path} is not JSON: it should be what release sign wrote`);
  }
  const signed = signedManifestSchema.safeParse(parsed);
  if (!signed.success) throw new Error(`${path} is not a signed release manifest`);
  return Buffer.from(JSON.stringify(signed.data)).toString('base64');
}

/** The rollout's target from `--all`, `--percent N` or `--devices D1,D2`: exactly one. */
function target(flags: Flags): 'all' | { percent: number } | { devices: string[] } {
  const given = [flags.all, flags.percent !== undefined, flags.devices !== undefined].filter(Boolean).length;
  if (given !== 1) throw new UsageError('rollout start needs one of --all, --percent N or --devices D1,D2');
  if (flags.all) return 'all';
  if (flags.percent !== undefined) {
    const percent = Number(flags.percent.replace(/%$/, ''));
    if (!Number.isInteger(percent) || percent < 1 || percent > 100) {
      throw new UsageError('--percent takes a whole number 1..100');
    }
    return { percent };
  }
  return {
    devices: (flags.devices ?? '')
      .split(',')
      .map((id) => id.trim())
      .filter(Boolean),
  };
}

/** `--stop-at 20%` (or 0.2): the share of roll-backs that halts the rollout. */
function stopAt(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const share = text.endsWith('%') ? Number(text.slice(0, -1)) / 100 : Number(text);
  if (!Number.isFinite(share) || share < 0 || share > 1)
    throw new UsageError('--stop-at takes a share such as 20%');
  return share;
}

function rolloutText(rollout: Row): string {
  const counts = Object.entries((rollout.counts as Record<string, number>) ?? {})
    .map(([state, count]) => `${state} ${count}`)
    .join(', ');
  return [
    `Rollout ${rollout.id}: release ${rollout.release_id} (${rollout.version}, ${rollout.arch}), ${rollout.state}` +
      (rollout.halted_reason ? `: ${rollout.halted_reason}` : ''),
    `  ${rollout.targeted} controller(s) targeted${counts ? `: ${counts}` : ''}`,
  ].join('\n');
}

export const RELEASE_COMMANDS: readonly AdminCommand[] = [
  {
    name: 'release upload',
    args: 'BUNDLE [--manifest FILE]',
    help: 'send a signed bundle to the cloud (manifest by default BUNDLE.manifest.json)',
    async run({ connection, arg, flags }) {
      if (!arg)
        throw new UsageError(
          'release upload needs the bundle file, such as: release upload gatelink-2.0.0-arm64.tar.gz',
        );
      if (!existsSync(arg)) throw new UsageError(`no bundle at ${arg}`);
      const header = manifestHeader(flags.manifest ?? manifestFileOf(arg));
      const body = Readable.toWeb(createReadStream(arg)) as ReadableStream<Uint8Array>;
      const answer = await upload(connection, '/ops/releases', body, {
        'content-type': 'application/gzip',
        'gatelink-release-manifest': header,
      });
      const release = answer.release as Row;
      return {
        answer,
        text: () =>
          `Release ${release.id} stored: ${release.version} for ${release.arch} (${release.size} bytes).`,
      };
    },
  },
  {
    name: 'release list',
    async run({ connection }) {
      const answer = await call(connection, 'GET', '/ops/releases');
      return { answer, text: () => table(answer.releases as Row[], RELEASE_COLUMNS) };
    },
  },
  {
    name: 'rollout start',
    args: 'RELEASE_ID (--all | --percent N | --devices D1,D2) [--downgrade] [--stop-at 20%]',
    help: 'send a release to controllers of its arch; halts when more than --stop-at roll back',
    async run(input) {
      const releaseId = Number(input.arg);
      if (!Number.isSafeInteger(releaseId) || releaseId < 1)
        throw new UsageError('rollout start needs a release id');
      const share = stopAt(input.flags['stop-at']);
      const answer = await call(input.connection, 'POST', '/ops/rollouts', {
        release_id: releaseId,
        target: target(input.flags),
        allow_downgrade: input.flags.downgrade === true,
        ...(share === undefined ? {} : { max_rollback_share: share }),
      });
      const skipped = (answer.not_targeted as Row[]).map(
        (row) => `  not targeted: ${row.device_id} (${row.reason})`,
      );
      return { answer, text: () => [rolloutText(answer.rollout as Row), ...skipped].join('\n') };
    },
  },
  {
    name: 'rollout pause',
    args: 'ID',
    async run(input) {
      const answer = await call(
        input.connection,
        'POST',
        `/ops/rollouts/${rolloutId(input, 'rollout pause')}/pause`,
      );
      return { answer, text: () => rolloutText(answer.rollout as Row) };
    },
  },
  {
    name: 'rollout resume',
    args: 'ID',
    async run(input) {
      const answer = await call(
        input.connection,
        'POST',
        `/ops/rollouts/${rolloutId(input, 'rollout resume')}/resume`,
      );
      return { answer, text: () => rolloutText(answer.rollout as Row) };
    },
  },
  {
    name: 'rollout show',
    args: 'ID',
    help: "a rollout and each targeted controller's state",
    async run(input) {
      const answer = await call(input.connection, 'GET', `/ops/rollouts/${rolloutId(input, 'rollout show')}`);
      const columns = ['device_id', 'label', 'state', 'reason', 'detail', 'updated_at'];
      return {
        answer,
        text: () =>
          [rolloutText(answer.rollout as Row), '', table(answer.devices as Row[], columns)].join('\n'),
      };
    },
  },
  {
    name: 'rollout list',
    async run({ connection }) {
      const answer = await call(connection, 'GET', '/ops/rollouts');
      return { answer, text: () => table(answer.rollouts as Row[], ROLLOUT_COLUMNS) };
    },
  },
];
