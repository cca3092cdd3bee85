#!/usr/bin/env node
// `npm run build:device -- <folder> [--arch arm64|x64]`: writes the controller into <folder> as a board
// receives it (docs/design.md section 12.2): dist/ with device/ and the shared/ files it imports, compiled by tsc
// (tsconfig.device.json); node_modules/ with the production dependencies of device/package.json and nothing
// else, installed by `npm ci --omit=dev --workspace device` from the repository's own lock file, so with the
// versions the tests ran; bin/gatelink-device.mjs and bin/gatelink-boot.mjs; hardware/ with install.sh, the
// systemd unit, the udev rule and the example objects file; a package.json naming the version;
// and release.json (name, version, arch, node_abi: what an update's signed manifest must match, section 12.4.1).
// It prints the size.
// The folder must be new or empty. npm's cache is npm's own (npm_config_cache chooses it); none is written
// into the folder. For another CPU than this machine's (--arch), the GPIO module is cross-compiled
// (cross-build.mjs) and serialport keeps its prebuilt binaries.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { crossBuildEnv, headersAbi, RELEASE_ARCHES } from './cross-build.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The workspaces whose manifests the lock file names: `npm ci` checks the lock against all of them. */
const WORKSPACES = ['shared', 'cloud', 'device', 'company'];
/** What install.sh needs beside the controller: itself, the systemd unit, the modem's udev rule, the example. */
const INSTALLER_FILES = [
  'install.sh',
  'gatelink-device.service',
  '99-gatelink-modem.rules',
  'device.example.yaml',
];

function fail(message) {
  process.stderr.write(`build:device: ${message}\n`);
  process.exit(1);
}

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** The files under a folder (symbolic links not followed): their bytes, and what they take on disk as `du` counts. */
function sizeOf(folder) {
  let bytes = 0;
  let onDisk = 0;
  let files = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const stat = statSync(join(entry.parentPath, entry.name));
    bytes += stat.size;
    onDisk += stat.blocks * 512;
    files += 1;
  }
  return { bytes, onDisk, files };
}

/** TypeScript's compiler, a development dependency: a tree installed with --omit=dev has none. */
function compiler() {
  try {
    return createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    process.stderr.write(
      'build:device: TypeScript is not installed here: run "npm ci" (on a board: "npm ci --workspace device") first.\n',
    );
    process.exit(1);
  }
}

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: { arch: { type: 'string', default: process.arch } },
});
const target = positionals[0];
const arch = options.arch;
if (!target) fail('usage: npm run build:device -- <folder> [--arch arm64|x64] (a new or empty folder)');
if (!RELEASE_ARCHES.includes(arch)) fail(`--arch must be one of ${RELEASE_ARCHES.join(', ')}, not ${arch}`);
const cross = arch !== process.arch;
const crossEnv = cross ? crossBuildEnv(arch, fail) : undefined;
const out = resolve(target);
if (existsSync(out) && readdirSync(out).length > 0) fail(`${out} is not empty: give a new or empty folder`);
const tsc = compiler();
mkdirSync(out, { recursive: true });

try {
  execFileSync(
    process.execPath,
    [tsc, '-p', join(root, 'tsconfig.device.json'), '--outDir', join(out, 'dist')],
    { cwd: root, stdio: 'inherit' },
  );
} catch {
  fail('tsc found errors (above)');
}

// npm ci as in the repository, limited to the controller's workspace: the root manifest (with allowScripts, for
// the GPIO module's build), the lock and the workspaces' manifests, removed again once node_modules is in place.
for (const file of [
  'package.json',
  'package-lock.json',
  ...WORKSPACES.map((name) => join(name, 'package.json')),
]) {
  mkdirSync(join(out, file, '..'), { recursive: true });
  cpSync(join(root, file), join(out, file));
}
const npmOptions = ['--no-audit', '--no-fund', '--loglevel=error'];
try {
  // For another CPU no install script runs: serialport's would try to load this CPU's binary, then compile;
  // its prebuilds for every platform are in the package, and node-gyp-build picks the board's at run time.
  execFileSync(
    'npm',
    ['ci', '--omit=dev', '--workspace', 'device', ...(cross ? ['--ignore-scripts'] : []), ...npmOptions],
    { cwd: out, stdio: 'inherit' },
  );
  if (cross) {
    execFileSync('npm', ['rebuild', 'epoll', ...npmOptions], {
      cwd: out,
      stdio: 'inherit',
      env: { ...process.env, ...crossEnv },
    });
  }
} catch {
  fail(
    `npm ci of the controller's dependencies${cross ? ` or the ${arch} build of epoll` : ''} failed (above)`,
  );
}
// A dependency npm had to place under device/node_modules (another workspace needing another version of it)
// would not be found from dist/device: say so rather than ship a controller that cannot start.
if (existsSync(join(out, 'device', 'node_modules'))) {
  fail("npm placed some of the controller's dependencies under device/node_modules; align their versions");
}
for (const name of [...WORKSPACES, 'package-lock.json', join('node_modules', '.package-lock.json')]) {
  rmSync(join(out, name), { recursive: true, force: true });
}
rmSync(join(out, 'node_modules', '@gatelink'), { recursive: true, force: true });

const repository = readJson(join(root, 'package.json'));
const device = readJson(join(root, 'device', 'package.json'));
const manifest = {
  name: device.name,
  version: repository.version,
  private: true,
  description: device.description,
  type: 'module',
  engines: device.engines,
  bin: { 'gatelink-device': 'bin/gatelink-device.mjs' },
  dependencies: device.dependencies,
};
writeFileSync(join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
const release = { name: 'gatelink-device', version: repository.version, arch, node_abi: headersAbi() };
writeFileSync(join(out, 'release.json'), `${JSON.stringify(release, null, 2)}\n`);
mkdirSync(join(out, 'bin'));
cpSync(join(root, 'bin', 'gatelink-device.mjs'), join(out, 'bin', 'gatelink-device.mjs'));
// The boot guard systemd runs from the known-good release (docs/design.md section 12.4.3).
cpSync(join(root, 'bin', 'gatelink-boot.mjs'), join(out, 'bin', 'gatelink-boot.mjs'));
// The installer's files: a board installs a release fetched from the cloud with its own install.sh, and the
// example objects file is beside every installed release (hardware/README.md, "Installing the software").
mkdirSync(join(out, 'hardware'));
for (const file of INSTALLER_FILES) cpSync(join(root, 'hardware', file), join(out, 'hardware', file));

const size = sizeOf(out);
const mb = (bytes) => `${(bytes / 1_000_000).toFixed(1)} MB`;
process.stdout.write(
  `build:device: the controller ${repository.version} (${arch}) in ${out}: ${size.files} files, ${mb(size.bytes)} ` +
    `(${mb(size.onDisk)} on disk)\n`,
);
