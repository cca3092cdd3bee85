#!/usr/bin/env node
// `npm run release:device -- [--arch arm64|x64] [--out FILE] [--tree FOLDER]`: a controller release bundle
// (docs/design.md section 12.4.1). Builds the controller's tree for the board's CPU (device-tree.mjs, in a
// temporary folder), or takes a tree built before (--tree), and packs it as the gzipped tar a controller
// unpacks: entries relative, depth first with names sorted; regular files and directories only (hard links
// copied apart, node_modules/.bin left out); one fixed time, no owners, modes 0755/0644 (set in the tree
// itself): the same tree gives the same bytes. Prints the file, its size and its SHA-256;
// `gatelink-admin release sign` signs it.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  createReadStream,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { create } from 'tar';
import { RELEASE_ARCHES } from './cross-build.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Every entry's modification time: SOURCE_DATE_EPOCH when set (reproducible-builds.org), else a fixed day. */
const MTIME = new Date(Number(process.env.SOURCE_DATE_EPOCH ?? 1_577_836_800) * 1000);
/** npm's links to packages' commands: symbolic links, and nothing the controller runs. */
const LEFT_OUT = join('node_modules', '.bin');

function fail(message) {
  process.stderr.write(`release:device: ${message}\n`);
  process.exit(1);
}

/**
 * The tree's entries, sorted, with their modes made 0755 (directories, executables) or 0644: a mode is all
 * the metadata a bundle keeps. A symbolic link or any other kind of file is refused, not packed.
 */
function treeEntries(tree) {
  const entries = [];
  const walk = (folder) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      const entry = relative(tree, path);
      if (entry === LEFT_OUT) continue;
      const stat = lstatSync(path);
      if (stat.isDirectory()) {
        chmodSync(path, 0o755);
        entries.push(entry);
        walk(path);
      } else if (stat.isFile()) {
        // A file with other names (node-gyp links its build output) would be packed as a hard link: copy it.
        if (stat.nlink > 1) {
          copyFileSync(path, `${path}.copy`);
          renameSync(`${path}.copy`, path);
        }
        chmodSync(path, stat.mode & 0o111 ? 0o755 : 0o644);
        entries.push(entry);
      } else fail(`${entry} is neither a file nor a folder (a symbolic link?): a bundle holds only those`);
    }
  };
  walk(tree);
  return entries;
}

function sha256(file) {
  return new Promise((done, failed) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => done(hash.digest('hex')))
      .on('error', failed);
  });
}

function readRelease(tree) {
  try {
    return JSON.parse(readFileSync(join(tree, 'release.json'), 'utf8'));
  } catch {
    return fail(`${tree} has no readable release.json: build it with npm run build:device`);
  }
}

/** Builds the tree for `arch` into a new temporary folder; the caller removes it. */
function buildTree(arch) {
  const tree = mkdtempSync(join(tmpdir(), 'gatelink-release-'));
  try {
    execFileSync(process.execPath, [join(root, 'packaging', 'device-tree.mjs'), tree, '--arch', arch], {
      stdio: ['ignore', process.stderr, 'inherit'],
    });
  } catch {
    rmSync(tree, { recursive: true, force: true });
    fail(`the ${arch} build of the controller failed (above)`);
  }
  return tree;
}

const { values } = parseArgs({
  options: {
    arch: { type: 'string', default: process.arch },
    out: { type: 'string' },
    tree: { type: 'string' },
  },
});
if (!values.tree && !RELEASE_ARCHES.includes(values.arch)) {
  fail(`--arch must be one of ${RELEASE_ARCHES.join(', ')}, not ${values.arch}`);
}
const tree = values.tree ? resolve(values.tree) : buildTree(values.arch);
try {
  const release = readRelease(tree);
  const out = resolve(values.out ?? `gatelink-device-${release.version}-${release.arch}.tar.gz`);
  await create(
    { file: out, cwd: tree, gzip: { level: 9 }, portable: true, mtime: MTIME, noDirRecurse: true },
    treeEntries(tree),
  );
  const size = lstatSync(out).size;
  process.stdout.write(
    [
      `release:device: gatelink-device ${release.version} for ${release.arch} (Node ABI ${release.node_abi})`,
      `  file    ${out}`,
      `  size    ${size} bytes (${(size / 1_000_000).toFixed(1)} MB)`,
      `  sha256  ${await sha256(out)}`,
      `Sign it on the machine holding the release key: gatelink-admin release sign ${out} --key <key file>`,
      '',
    ].join('\n'),
  );
} finally {
  if (!values.tree) rmSync(tree, { recursive: true, force: true });
}
