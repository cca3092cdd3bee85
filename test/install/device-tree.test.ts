import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boardOnline, openProvisionedBoard, provisionedBoard } from '../support/board-opening.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The controller as a board receives it (docs/design.md section 12.2): `npm run build:device -- <folder>` into an
 * empty folder, then what an installer would notice: its size, that it holds no package the controller does not
 * import, and that the controller runs from it alone, provisioned against a cloud, opening a gate on a signed
 * command and stopping on SIGTERM.
 */
const ROOT = resolve(import.meta.dirname, '../..');
/** The most a controller's software may take on the board's card, native modules included. */
const LIMIT_BYTES = 40 * 1_000_000;
/** Packages of the cloud or of development: none may reach a board. */
const NOT_ON_A_BOARD = [
  'fastify',
  'aedes',
  '@electric-sql/pglite',
  'sharp',
  'kysely',
  'pg',
  'tsx',
  'esbuild',
  'typescript',
  'nodemailer',
  '@simplewebauthn/server',
  '@simplewebauthn/browser',
  'preact',
  'vitest',
  'qrcode-terminal',
];
const run = promisify(execFile);

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

function manifest(folder: string): Manifest {
  return JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as Manifest;
}

/** Every package folder under a node_modules folder, nested ones too. */
function installed(nodeModules: string): string[] {
  if (!existsSync(nodeModules)) return [];
  return readdirSync(nodeModules)
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) =>
      name.startsWith('@')
        ? readdirSync(join(nodeModules, name)).map((inner) => join(nodeModules, name, inner))
        : [join(nodeModules, name)],
    )
    .flatMap((folder) => [folder, ...installed(join(folder, 'node_modules'))]);
}

/** The folder Node finds `name` in from `from`, as its resolution walks up the node_modules folders. */
function resolvePackage(name: string, from: string, top: string): string | null {
  for (let folder = from; ; folder = dirname(folder)) {
    const candidate = join(folder, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (folder === top || folder === dirname(folder)) return null;
  }
}

/** The package folders the tree's own dependencies reach, with theirs, and so on. */
function closure(top: string): Set<string> {
  const reached = new Set<string>();
  const pending = [top];
  while (pending.length > 0) {
    const folder = pending.pop()!;
    const { dependencies = {}, optionalDependencies = {} } = manifest(folder);
    for (const name of Object.keys({ ...dependencies, ...optionalDependencies })) {
      const found = resolvePackage(name, folder, top);
      if (found === null) {
        if (name in optionalDependencies) continue;
        throw new Error(`${relative(top, folder) || 'the tree'} needs ${name}, which is not installed`);
      }
      if (!reached.has(found)) {
        reached.add(found);
        pending.push(found);
      }
    }
  }
  return reached;
}

/** What the files under a folder take on disk, as `du` counts (symbolic links not followed). */
function diskUsage(folder: string): number {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .reduce((total, entry) => total + lstatSync(join(entry.parentPath, entry.name)).blocks * 512, 0);
}

let tree: string;
let printed: string;
let database: TestDatabase;
let cloud: TestCloud;
let work: string;
let daemon: ChildProcess | null = null;

beforeAll(async () => {
  tree = await mkdtemp(join(tmpdir(), 'gatelink-device-tree-'));
  work = await mkdtemp(join(tmpdir(), 'gatelink-device-tree-work-'));
  const built = await run(process.execPath, [join(ROOT, 'packaging/device-tree.mjs'), tree], {
    cwd: ROOT,
    timeout: 300_000,
  });
  printed = built.stdout;
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
}, 360_000);

afterAll(async () => {
  daemon?.kill('SIGKILL');
  await cloud?.stop();
  await database?.close();
  if (tree) await rm(tree, { recursive: true, force: true });
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the controller as a board receives it (npm run build:device)', () => {
  it('holds the compiled controller, its dependencies, its bins, its installer’s files, package.json and release.json, nothing else', () => {
    expect(readdirSync(tree).sort()).toEqual([
      'bin',
      'dist',
      'hardware',
      'node_modules',
      'package.json',
      'release.json',
    ]);
    expect(readdirSync(join(tree, 'bin')).sort()).toEqual(['gatelink-boot.mjs', 'gatelink-device.mjs']);
    expect(readdirSync(join(tree, 'hardware')).sort()).toEqual([
      '99-gatelink-modem.rules',
      'device.example.yaml',
      'gatelink-device.service',
      'install.sh',
    ]);
    expect(JSON.parse(readFileSync(join(tree, 'release.json'), 'utf8'))).toEqual({
      name: 'gatelink-device',
      version: manifest(tree).version,
      arch: process.arch,
      node_abi: process.versions.modules,
    });
    expect(readdirSync(join(tree, 'dist')).sort()).toEqual(['device', 'shared']);
    expect(manifest(tree)).toMatchObject({ name: '@gatelink/device', version: manifest(ROOT).version });
    expect(manifest(tree).dependencies).toEqual(manifest(join(ROOT, 'device')).dependencies);
  });

  it(`is under ${LIMIT_BYTES / 1_000_000} MB on disk, native modules included, and prints its size`, () => {
    const bytes = diskUsage(tree);
    expect(bytes).toBeLessThan(LIMIT_BYTES);
    expect(printed).toMatch(
      /build:device: the controller \S+ \(\w+\) in .+: \d+ files, [\d.]+ MB \([\d.]+ MB on disk\)/,
    );
  });

  it('holds only packages the controller’s dependencies reach, none of the cloud’s or of development', () => {
    const top = join(tree, 'node_modules');
    const present = installed(top);
    const needed = closure(tree);
    expect(present.filter((folder) => !needed.has(folder)).map((folder) => relative(top, folder))).toEqual(
      [],
    );
    const names = new Set(present.map((folder) => manifest(folder).name));
    expect(NOT_ON_A_BOARD.filter((name) => names.has(name))).toEqual([]);
    expect([...names]).toEqual(
      expect.arrayContaining(['mqtt', 'onoff', 'epoll', 'serialport', 'zod', 'yaml']),
    );
    expect(existsSync(join(tree, 'node_modules', '.package-lock.json'))).toBe(false);
  });

  it('prints its version from bin/gatelink-device.mjs, and loads the GPIO and serial modules built for it', async () => {
    const { stdout } = await run(process.execPath, [join(tree, 'bin/gatelink-device.mjs'), '--version'], {
      cwd: work,
    });
    expect(stdout.trim()).toBe(manifest(ROOT).version);
    const native = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { Gpio } = await import('onoff'); const { autoDetect } = await import('@serialport/bindings-cpp');
         console.log(typeof Gpio.accessible, typeof autoDetect().list);`,
      ],
      { cwd: tree },
    );
    expect(native.stdout.trim()).toBe('boolean function');
  });

  it('provisions, runs, opens on a signed command and stops on SIGTERM, from that folder alone', async () => {
    const bin = join(tree, 'bin/gatelink-device.mjs');
    const created = await cloud.ops('POST', '/ops/devices', { label: 'Board gate' });
    const { provisioning_code: code } = created.body.device as { provisioning_code: string };
    const objects = join(work, 'objects.yaml');
    await writeFile(
      objects,
      'objects:\n  - {id: gate, label: Main gate, kind: simulated, pulse_ms: 0}\nclock:\n  check: none\n',
    );
    const config = join(work, 'device.yaml');
    const provisioned = await run(
      process.execPath,
      [
        bin,
        'provision',
        '--cloud',
        cloud.baseUrl,
        '--code',
        code,
        '--config',
        config,
        '--objects-from',
        objects,
      ],
      { cwd: work },
    );
    const board = provisionedBoard(provisioned.stdout);
    expect(board.pairingCode, provisioned.stdout).toBeDefined();

    let output = '';
    daemon = spawn(process.execPath, [bin, 'run', '--config', config], { cwd: work });
    daemon.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    await waitFor(() => boardOnline(cloud), 'the controller to come online');

    const opened = await openProvisionedBoard(cloud, board, { owner: 'Board owner', actor: 'Driver' });
    expect(opened.status, JSON.stringify(opened.body)).toBe(200);
    expect(opened.body).toMatchObject({ ok: 1 });
    await waitFor(() => /command \S+ \(gate\): opened/.test(output), 'the daemon to log the opening');

    const exited = new Promise<number | null>((done) => daemon?.once('exit', done));
    daemon.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('stopped, outputs released');
    daemon = null;
  });
});
