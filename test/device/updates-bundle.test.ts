import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { create } from 'tar';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BundleError, unpackBundle } from '../../device/updates/unpack.js';
import { signManifest } from '../../shared/releases/manifest.js';
import { waitFor } from '../support/wait-for.js';
import { tempDir } from './fixtures.js';
import { type Board, link, online, send, UpdateBench } from './update-bench.js';

/**
 * A bundle may hold files and folders under its root and nothing else (docs/design.md section 12.4.3): a link,
 * an absolute path or a `..` is refused before anything is written, inside the release folder or outside it.
 */
let dir: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.cleanup());

/** A gzipped tar of `entries` (paths relative to `cwd`) kept as given, `..` and absolute paths included. */
async function rawBundle(name: string, cwd: string, entries: string[]): Promise<string> {
  const file = join(dir.dir, `${name}.tgz`);
  await create({ gzip: true, file, cwd, preservePaths: true, portable: true }, entries);
  return file;
}

describe('unpacking a bundle [attack:device.bundle-traversal]', () => {
  it.each([
    ['a symbolic link', 'link'],
    ['a path climbing out with ..', 'climb'],
    ['an absolute path', 'absolute'],
  ])('refuses %s and writes nothing', async (_what, kind) => {
    const source = join(dir.dir, `source-${kind}`, 'inner');
    mkdirSync(source, { recursive: true });
    writeFileSync(join(source, 'release.json'), '{}');
    const outside = join(dir.dir, `outside-${kind}.txt`);
    writeFileSync(join(dir.dir, `source-${kind}`, 'evil.txt'), 'evil');
    let entries = ['release.json'];
    if (kind === 'link') {
      symlinkSync('/etc/passwd', join(source, 'passwd'));
      entries = ['release.json', 'passwd'];
    }
    if (kind === 'climb') entries = ['release.json', '../evil.txt'];
    if (kind === 'absolute') entries = ['release.json', join(dir.dir, `source-${kind}`, 'evil.txt')];
    const bundle = await rawBundle(kind, source, entries);
    const target = join(dir.dir, `target-${kind}`, 'release.partial');
    await expect(unpackBundle(bundle, target)).rejects.toBeInstanceOf(BundleError);
    expect(existsSync(target)).toBe(false);
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(join(dir.dir, `target-${kind}`, 'evil.txt'))).toBe(false);
  });

  it('unpacks files and folders under the root', async () => {
    const source = join(dir.dir, 'plain');
    mkdirSync(join(source, 'dist'), { recursive: true });
    writeFileSync(join(source, 'dist', 'main.js'), 'export {};');
    const bundle = await rawBundle('plain', source, ['.']);
    const target = join(dir.dir, 'plain-target');
    await unpackBundle(bundle, target);
    expect(readFileSync(join(target, 'dist', 'main.js'), 'utf8')).toBe('export {};');
  });
});

describe('a bundle with a link in it, signed and hash-correct [attack:device.bundle-traversal]', () => {
  const bench = new UpdateBench();
  let board: Board | null = null;
  beforeAll(() => bench.start());
  afterAll(() => bench.stop());
  afterEach(async () => {
    await board?.cleanup();
  });

  it('is refused as bad_bundle, and the board keeps its release', async () => {
    const tree = join(dir.dir, 'linked-tree');
    cpSync(bench.trees.v2.folder, tree, { recursive: true });
    symlinkSync('/etc/passwd', join(tree, 'passwd'));
    const file = join(dir.dir, 'linked.tgz');
    await create({ gzip: true, file, cwd: tree, portable: true }, ['.']);
    const bytes = readFileSync(file);
    const release = signManifest(bench.releaseKey, {
      v: 1,
      name: 'gatelink-device',
      version: '0.2.0',
      arch: process.arch === 'arm64' ? 'arm64' : 'x64',
      node_abi: process.versions.modules,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      size: bytes.length,
      signed_at: Date.now(),
    });
    board = await bench.startBoard(bench.trees.v1);
    await online(board, '0.1.0');
    await send(board, bench.updateCommand(release, bench.serve(bytes)));
    await waitFor(() => board?.state()?.update?.state === 'failed', 'the failure report');
    expect(board.state()?.update).toMatchObject({ reason: 'bad_bundle' });
    expect(board.state()?.update?.detail).toMatch(/passwd/);
    expect(link(board.home, 'current')).toBe('releases/0.1.0-initial');
    expect(readdirSync(join(board.home, 'releases'))).toEqual(['0.1.0-initial']);
  });
});
