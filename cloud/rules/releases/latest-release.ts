import { ApiError } from '../../../shared/errors.js';
import { compareVersions, type ReleaseArch, type SignedManifest } from '../../../shared/releases/manifest.js';
import type { CloudContext } from '../../foundation/context.js';
import { getRelease, type ReleaseView, releaseManifest } from './releases.js';

/**
 * The release a new board of `arch` installs (docs/design.md section 12.4.4): the newest version among the
 * releases the operator rolled out to all controllers, in a rollout still running or finished. A release only
 * uploaded, rolled out to some, paused or halted is not handed to new boards: what every controller runs is
 * what a new one starts with.
 */
export async function latestRelease(
  ctx: CloudContext,
  arch: ReleaseArch,
): Promise<{ release: ReleaseView; manifest: SignedManifest }> {
  const rows = await ctx.db
    .selectFrom('releases')
    .innerJoin('rollouts', 'rollouts.release_id', 'releases.id')
    .select(['releases.id', 'releases.version'])
    .where('releases.arch', '=', arch)
    .where('rollouts.target_kind', '=', 'all')
    .where('rollouts.state', 'in', ['running', 'finished'])
    .execute();
  const newest = rows.reduce<(typeof rows)[number] | null>(
    (best, row) => (best === null || compareVersions(row.version, best.version) > 0 ? row : best),
    null,
  );
  if (!newest) throw new ApiError('release_not_found');
  return { release: await getRelease(ctx, newest.id), manifest: await releaseManifest(ctx, newest.id) };
}
