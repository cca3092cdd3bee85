import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { extract } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BundleEntry, bundleEntries, unsafeEntries } from './bundle-entries.js';

/**
 * A controller release for the Raspberry Pi built on this x86-64 machine (docs/design.md section 12.4.1):
 * `npm run release:device -- --arch arm64` once, then what a board would meet: the bundle's entries, the GPIO
 * module (epoll) cross-compiled for ARM aarch64 and loading, with serialport's prebuilt arm64 binding, under the
 * arm64 Node.js in qemu-user. `.ci/run` installs the cross compiler and qemu, test/arm64/fetch-node.sh the Node.js.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const ARM_NODE = process.env.GATELINK_ARM64_NODE ?? resolve(ROOT, '.cache/arm64/bin/node');
const found = (command: string) =>
  spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
const QEMU = found('qemu-aarch64-static');
const missing = !found('aarch64-linux-gnu-g++')
  ? 'the cross compiler aarch64-linux-gnu-g++ (apt-get install g++-aarch64-linux-gnu)'
  : !QEMU
    ? 'qemu-aarch64-static (apt-get install qemu-user-static libc6:arm64 libstdc++6:arm64)'
    : !existsSync(ARM_NODE)
      ? `the arm64 Node.js at ${ARM_NODE} (bash test/arm64/fetch-node.sh)`
      : !found('file')
        ? 'file (apt-get install file)'
        : null;
if (missing) console.log(`arm64 release suite skipped: it needs ${missing}`);

/** Building takes a minute or two on a busy machine, emulation several times longer than native: bounds only. */
const BUILD = 600_000;
const EMULATED = 120_000;
const run = promisify(execFile);

let dir: string;
let bundle: string;
let unpacked: string;
let printed: string;
let entries: BundleEntry[];

describe.skipIf(missing !== null)('a controller release built for arm64 here', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatelink-arm64-release-'));
    bundle = join(dir, 'release.tar.gz');
    const built = await run(
      process.execPath,
      [join(ROOT, 'packaging/device-release.mjs'), '--arch', 'arm64', '--out', bundle],
      // The board's Node.js headers (the arm64 Node.js 20 fetched for these suites), whatever Node.js runs this:
      // the GPIO module must load on the board's Node.js, not on the builder's.
      {
        cwd: dir,
        timeout: BUILD,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, npm_config_nodedir: dirname(dirname(ARM_NODE)) },
      },
    );
    printed = built.stdout;
    entries = await bundleEntries(bundle);
    unpacked = join(dir, 'unpacked');
    mkdirSync(unpacked);
    await extract({ file: bundle, cwd: unpacked });
  }, BUILD);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is a bundle of files and folders only, relative, without npm’s links, with release.json at its root', () => {
    expect(printed).toMatch(/release:device: gatelink-device \S+ for arm64 \(Node ABI \d+\)/);
    expect(printed).toMatch(/sha256 {2}[0-9a-f]{64}/);
    expect(unsafeEntries(entries)).toEqual([]);
    expect(entries.some((entry) => entry.path.startsWith('node_modules/.bin'))).toBe(false);
    const paths = entries.map((entry) => entry.path);
    // Depth first, names sorted in each folder: every folder comes before what it holds.
    const seen = new Set<string>();
    const orphans = paths.filter((path) => {
      seen.add(path);
      const parent = path.replace(/[^/]+\/?$/, '');
      return parent !== '' && !seen.has(parent);
    });
    expect(orphans).toEqual([]);
    expect(paths).toContain('bin/gatelink-device.mjs');
    expect(paths).toContain('bin/gatelink-boot.mjs');
    // What a board installs a release fetched from the cloud with, and its systemd unit.
    expect(paths).toContain('hardware/install.sh');
    expect(paths).toContain('hardware/gatelink-device.service');
    expect(JSON.parse(readFileSync(join(unpacked, 'release.json'), 'utf8'))).toEqual({
      name: 'gatelink-device',
      version: JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version,
      arch: 'arm64',
      node_abi: '115',
    });
  });

  it('holds the GPIO module compiled for ARM aarch64, and no native module built for this machine', async () => {
    const epoll = join(unpacked, 'node_modules/epoll/build/Release/epoll.node');
    expect((await run('file', ['-b', epoll])).stdout).toContain('ARM aarch64');
    // Built here, not prebuilt: every .node outside a package's prebuilds/ is the board's.
    const built = entries
      .map((entry) => entry.path)
      .filter((path) => path.endsWith('.node') && !path.includes('/prebuilds/'));
    expect(built.length).toBeGreaterThan(0);
    for (const path of built) {
      expect((await run('file', ['-b', join(unpacked, path)])).stdout, path).toContain('ARM aarch64');
    }
  });

  it(
    'loads onoff’s GPIO module and serialport’s binding with the arm64 Node.js',
    async () => {
      const script =
        "const { Epoll } = require('epoll'); const bindings = require('@serialport/bindings-cpp');" +
        "console.log(process.arch, typeof Epoll, typeof bindings.autoDetect, require('onoff').Gpio.accessible);";
      const { stdout } = await run(QEMU, [ARM_NODE, '-e', script], {
        cwd: unpacked,
        timeout: EMULATED,
      });
      expect(stdout.trim()).toMatch(/^arm64 function function (true|false)$/);
    },
    EMULATED,
  );
});
