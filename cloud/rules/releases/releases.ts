import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { strictPublicKeyFromBase64 } from '../../../shared/crypto/ed25519.js';
import { ApiError } from '../../../shared/errors.js';
import {
  RELEASE_MAX_BYTES,
  type SignedManifest,
  signedManifestSchema,
  verifyManifest,
} from '../../../shared/releases/manifest.js';
import type { CloudContext } from '../../foundation/context.js';
import { isUniqueViolation } from '../../foundation/db/unique-violation.js';

/**
 * Releases the operator uploads (docs/design.md section 12.4.2). The cloud keeps a bundle only when its manifest
 * verifies with RELEASE_PUBLIC_KEY and the bytes are the ones the manifest names; it never signs one itself.
 * The bytes go to `release_chunks` in CHUNK_BYTES pieces, in the same transaction as the release row, so that
 * a refused or broken upload leaves nothing behind and neither direction holds a whole bundle in memory.
 */
export const CHUNK_BYTES = 1024 * 1024;

export interface ReleaseView {
  id: number;
  version: string;
  arch: string;
  node_abi: string;
  sha256: string;
  size: number;
  created_at: string;
}

/** The signed manifest from the `gatelink-release-manifest` header (base64 of its JSON), checked with the key. */
export function checkedManifest(ctx: CloudContext, header: string | undefined): SignedManifest {
  const keyText = ctx.config.releasePublicKey;
  if (!keyText) throw new ApiError('release_key_unset');
  if (!header)
    throw new ApiError('release_signature_invalid', { detail: 'no gatelink-release-manifest header' });
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
  } catch {
    throw new ApiError('release_signature_invalid', { detail: 'the manifest header is not base64 of JSON' });
  }
  const signed = signedManifestSchema.safeParse(parsed);
  if (!signed.success) {
    throw new ApiError('release_signature_invalid', {
      detail: 'the manifest does not have the expected fields',
    });
  }
  if (!verifyManifest(strictPublicKeyFromBase64(keyText), signed.data)) {
    throw new ApiError('release_signature_invalid');
  }
  return signed.data;
}

/** Stores a bundle read from `body` under its verified manifest; refuses a known (arch, version) first. */
export async function storeRelease(
  ctx: CloudContext,
  signed: SignedManifest,
  body: AsyncIterable<Buffer | Uint8Array> & Readable,
): Promise<ReleaseView> {
  const { manifest } = signed;
  if (await releaseExists(ctx, manifest.arch, manifest.version)) throw new ApiError('release_exists');
  try {
    const id = await ctx.db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('releases')
        .values({
          version: manifest.version,
          arch: manifest.arch,
          node_abi: manifest.node_abi,
          sha256: manifest.sha256,
          size: manifest.size,
          manifest: JSON.stringify(signed),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const written = await writeChunks(body, manifest.size, (seq, data) =>
        trx.insertInto('release_chunks').values({ release_id: row.id, seq, data }).execute(),
      );
      if (written.size !== manifest.size || written.sha256 !== manifest.sha256) {
        throw new ApiError('release_bundle_mismatch', {
          detail: `got ${written.size} bytes with SHA-256 ${written.sha256}`,
        });
      }
      return row.id;
    });
    return getRelease(ctx, id);
  } catch (error) {
    // The rest of a refused body is not read; the connection closes with the answer.
    body.resume();
    if (isUniqueViolation(error)) throw new ApiError('release_exists');
    throw error;
  }
}

/**
 * Hashes and writes the body in CHUNK_BYTES pieces; stops at the first byte past what the manifest announced
 * (or past RELEASE_MAX_BYTES), since such a bundle cannot match.
 */
async function writeChunks(
  body: AsyncIterable<Buffer | Uint8Array>,
  expected: number,
  write: (seq: number, data: Uint8Array) => Promise<unknown>,
): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  let seq = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    const data = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    await write(seq, data);
    seq += 1;
  };
  for await (const piece of body) {
    const buffer = Buffer.from(piece);
    size += buffer.length;
    if (size > RELEASE_MAX_BYTES) {
      throw new ApiError('too_large', {
        message: `A release bundle may be at most ${RELEASE_MAX_BYTES} bytes.`,
      });
    }
    if (size > expected) {
      throw new ApiError('release_bundle_mismatch', { detail: `more than the ${expected} bytes announced` });
    }
    hash.update(buffer);
    let offset = 0;
    while (offset < buffer.length) {
      const take = Math.min(CHUNK_BYTES - pendingBytes, buffer.length - offset);
      pending.push(buffer.subarray(offset, offset + take));
      pendingBytes += take;
      offset += take;
      if (pendingBytes === CHUNK_BYTES) await flush();
    }
  }
  if (pendingBytes > 0) await flush();
  return { size, sha256: hash.digest('hex') };
}

async function releaseExists(ctx: CloudContext, arch: string, version: string): Promise<boolean> {
  const row = await ctx.db
    .selectFrom('releases')
    .select('id')
    .where('arch', '=', arch)
    .where('version', '=', version)
    .executeTakeFirst();
  return row !== undefined;
}

const RELEASE_COLUMNS = ['id', 'version', 'arch', 'node_abi', 'sha256', 'size', 'created_at'] as const;

function view(row: {
  id: number;
  version: string;
  arch: string;
  node_abi: string;
  sha256: string;
  size: string;
  created_at: Date;
}): ReleaseView {
  return { ...row, size: Number(row.size), created_at: row.created_at.toISOString() };
}

export async function getRelease(ctx: CloudContext, id: number): Promise<ReleaseView> {
  const row = await ctx.db
    .selectFrom('releases')
    .select(RELEASE_COLUMNS)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw new ApiError('not_found', { message: `No release ${id}.` });
  return view(row);
}

export async function listReleases(ctx: CloudContext): Promise<ReleaseView[]> {
  const rows = await ctx.db.selectFrom('releases').select(RELEASE_COLUMNS).orderBy('id', 'desc').execute();
  return rows.map(view);
}

/** The stored signed manifest of a release, as the release key signed it. */
export async function releaseManifest(ctx: CloudContext, id: number): Promise<SignedManifest> {
  const row = await ctx.db.selectFrom('releases').select('manifest').where('id', '=', id).executeTakeFirst();
  if (!row) throw new ApiError('not_found', { message: `No release ${id}.` });
  return signedManifestSchema.parse(
    typeof row.manifest === 'string' ? JSON.parse(row.manifest) : row.manifest,
  );
}

/** The bundle's bytes, one chunk read at a time, in order. */
export async function* bundleChunks(ctx: CloudContext, id: number): AsyncGenerator<Buffer> {
  for (let seq = 0; ; seq += 1) {
    const row = await ctx.db
      .selectFrom('release_chunks')
      .select('data')
      .where('release_id', '=', id)
      .where('seq', '=', seq)
      .executeTakeFirst();
    if (!row) return;
    yield Buffer.from(row.data);
  }
}
