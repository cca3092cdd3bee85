import { createHash } from 'node:crypto';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { create } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strictPublicKeyFromBase64 } from '../../shared/crypto/ed25519.js';
import { signedManifestSchema, verifyManifest } from '../../shared/releases/manifest.js';
import { type ProgramRun, runProgram } from '../support/program-run.js';
import { bundleEntries } from './bundle-entries.js';

/**
 * The operator's offline side of a release (docs/design.md section 12.4.1): `npm run release:device` packs a
 * tree, `gatelink-admin release keygen` makes the release key and `release sign` signs the bundle, through the
 * compiled bin with no cloud, no database and an empty environment. The packing of a real controller build is
 * the arm64 suite's (arm64-release.test.ts); here a small tree stands in for it.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const ADMIN = resolve(ROOT, 'bin/gatelink-admin.mjs');
const PACKER = resolve(ROOT, 'packaging/device-release.mjs');
const RELEASE_JSON = { name: 'gatelink-device', version: '1.4.0', arch: 'arm64', node_abi: '115' };

let dir: string;
let tree: string;

/** Runs a program with nothing of this machine's environment but PATH: it must need none. */
function program(args: string[]): Promise<ProgramRun> {
  return runProgram(args, { cwd: dir, env: { PATH: process.env.PATH } });
}

const admin = (...args: string[]) => program([ADMIN, 'release', ...args]);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gatelink-release-cli-'));
  tree = join(dir, 'tree');
  mkdirSync(join(tree, 'bin'), { recursive: true });
  mkdirSync(join(tree, 'node_modules', '.bin'), { recursive: true });
  mkdirSync(join(tree, 'node_modules', 'mqtt', 'build'), { recursive: true });
  writeFileSync(join(tree, 'release.json'), JSON.stringify(RELEASE_JSON));
  writeFileSync(join(tree, 'bin', 'gatelink-device.mjs'), '#!/usr/bin/env node\n');
  chmodSync(join(tree, 'bin', 'gatelink-device.mjs'), 0o700);
  writeFileSync(join(tree, 'node_modules', 'mqtt', 'build', 'index.js'), 'export {};\n');
  // npm's links to packages' commands: the one kind of symbolic link a built tree has, left out.
  symlinkSync('../mqtt/build/index.js', join(tree, 'node_modules', '.bin', 'mqtt'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run release:device (packing)', () => {
  it('packs files and folders only, relative, with release.json, and the same tree gives the same bytes', async () => {
    const first = await program([PACKER, '--tree', tree, '--out', join(dir, 'a.tar.gz')]);
    expect(first.code, first.stderr).toBe(0);
    const second = await program([PACKER, '--tree', tree, '--out', join(dir, 'b.tar.gz')]);
    expect(second.code, second.stderr).toBe(0);
    const bytes = readFileSync(join(dir, 'a.tar.gz'));
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    expect(first.stdout).toContain('release:device: gatelink-device 1.4.0 for arm64 (Node ABI 115)');
    expect(first.stdout).toContain(`size    ${bytes.length} bytes`);
    expect(first.stdout).toContain(`sha256  ${sha256}`);
    expect(readFileSync(join(dir, 'b.tar.gz')).equals(bytes)).toBe(true);

    const entries = await bundleEntries(join(dir, 'a.tar.gz'));
    expect(entries.map((entry) => entry.path)).toEqual([
      'bin/',
      'bin/gatelink-device.mjs',
      'node_modules/',
      'node_modules/mqtt/',
      'node_modules/mqtt/build/',
      'node_modules/mqtt/build/index.js',
      'release.json',
    ]);
    expect(entries.filter((entry) => !['File', 'Directory'].includes(entry.type))).toEqual([]);
    expect(entries.find((entry) => entry.path === 'bin/gatelink-device.mjs')?.mode).toBe(0o755);
    expect(entries.find((entry) => entry.path === 'release.json')?.mode).toBe(0o644);
  });

  it('refuses a tree with a symbolic link outside node_modules/.bin', async () => {
    const linked = join(dir, 'linked');
    mkdirSync(linked);
    writeFileSync(join(linked, 'release.json'), JSON.stringify(RELEASE_JSON));
    symlinkSync('/etc/passwd', join(linked, 'passwd'));
    const run = await program([PACKER, '--tree', linked, '--out', join(dir, 'linked.tar.gz')]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      'release:device: passwd is neither a file nor a folder (a symbolic link?): a bundle holds only those',
    );
  });
});

describe('gatelink-admin release keygen and sign (offline)', { timeout: 60_000 }, () => {
  it('makes a private key file once, prints its public key, and signs a manifest that verifies with it', async () => {
    const keyFile = join(dir, 'release-key.pem');
    const made = await admin('keygen', '--out', keyFile);
    expect(made.code, made.stderr).toBe(0);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const publicKey = /RELEASE_PUBLIC_KEY=(\S+):/.exec(made.stdout)?.[1] ?? '';
    const key = strictPublicKeyFromBase64(publicKey);
    expect(made.stdout).toContain(`fingerprint   ${key.fingerprint}`);

    const again = await admin('keygen', '--out', keyFile);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`gatelink-admin: ${keyFile} exists: a release key is never overwritten`);

    const bundle = join(dir, 'a.tar.gz');
    const signed = await admin('sign', bundle, '--key', keyFile);
    expect(signed.code, signed.stderr).toBe(0);
    const manifest = signedManifestSchema.parse(JSON.parse(readFileSync(`${bundle}.manifest.json`, 'utf8')));
    const bytes = readFileSync(bundle);
    expect(manifest.manifest).toMatchObject({
      v: 1,
      ...RELEASE_JSON,
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    expect(verifyManifest(key, manifest)).toBe(true);
    expect(signed.stdout).toContain(`manifest      ${bundle}.manifest.json`);
  });

  it('says in one line what is wrong with the key file or the bundle', async () => {
    const keyFile = join(dir, 'errors-key.pem');
    expect((await admin('keygen', '--out', keyFile)).code).toBe(0);
    const bundle = join(dir, 'a.tar.gz');
    const refusals: [string[], string][] = [
      [
        ['sign', bundle, '--key', join(dir, 'none.pem')],
        `the release key file ${join(dir, 'none.pem')} does not exist`,
      ],
      [
        ['sign', join(dir, 'none.tar.gz'), '--key', keyFile],
        `the bundle ${join(dir, 'none.tar.gz')} does not exist`,
      ],
      [['keygen'], 'release keygen needs --out FILE'],
      [['sign', bundle], 'release sign needs --key FILE'],
    ];
    const noRelease = join(dir, 'no-release.tar.gz');
    await create({ file: noRelease, cwd: tree, gzip: true, portable: true }, ['bin']);
    refusals.push([['sign', noRelease, '--key', keyFile], `${noRelease} holds no release.json at its root`]);
    const notTar = join(dir, 'not-a-tar.tar.gz');
    writeFileSync(notTar, 'not a bundle\n');
    refusals.push([['sign', notTar, '--key', keyFile], `${notTar} is not a gzipped tar`]);
    const huge = join(dir, 'huge.tar.gz');
    writeFileSync(huge, '');
    truncateSync(huge, 200 * 1024 * 1024 + 1);
    refusals.push([['sign', huge, '--key', keyFile], `is ${200 * 1024 * 1024 + 1} bytes, more than the`]);
    for (const [args, message] of refusals) {
      const run = await admin(...args);
      expect(run.code, args.join(' ')).not.toBe(0);
      expect(run.stderr.split('\n')[0], args.join(' ')).toContain(message);
      expect(run.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
    }

    chmodSync(keyFile, 0o644);
    const exposed = await admin('sign', bundle, '--key', keyFile);
    expect(exposed.code).toBe(1);
    expect(exposed.stderr.trim()).toBe(
      `gatelink-admin: the release key file ${keyFile} has mode 0644: others may read it; chmod 600 ${keyFile}`,
    );
  });
});
