import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { RELEASE_ARCHES } from '../../../shared/releases/manifest.js';
import type { CloudContext } from '../../foundation/context.js';
import { MAX_ID, validate } from '../../foundation/http/validation.js';
import { latestRelease } from '../../rules/releases/latest-release.js';
import { bundleChunks, getRelease } from '../../rules/releases/releases.js';

/**
 * How a fresh board gets the controller from the operator's cloud (docs/design.md section 12.4.4), with no
 * clone, no npm and no compiler on it: `curl -fsSL <cloud>/api/device/install | sudo sh` runs the script beside
 * this file, which asks `latest/<arch>` for the release rolled out to every controller, downloads its bundle,
 * checks its SHA-256 and runs the bundle's own installer. All three are public: a release is not secret (what
 * makes one run on a provisioned controller is the release key's signature), and a board has no key yet.
 */
const SCRIPT = readFileSync(new URL('./install.sh', import.meta.url), 'utf8');
/**
 * The same for a phone in Termux that calls a gate (docs/design.md section 9.3): `curl -fsSL
 * <cloud>/api/device/install/phone | sh -s -- CODE`, with the customer's set-up code, no root.
 */
const PHONE_SCRIPT = readFileSync(new URL('./install-phone.sh', import.meta.url), 'utf8');
/** Public downloads at once per cloud node; more answer 503 with Retry-After, so that they cannot starve the API. */
export const PUBLIC_DOWNLOADS_AT_ONCE = 4;

const archParams = z.object({ arch: z.enum(RELEASE_ARCHES) });
const idParams = z.object({ id: z.coerce.number().int().positive().max(MAX_ID) });

/** The script with the cloud's address in place, quoted for sh. */
export function installScript(baseUrl: string, script = SCRIPT): string {
  return script
    .replaceAll("'__CLOUD__'", `'${baseUrl.replaceAll("'", `'\\''`)}'`)
    .replaceAll('__CLOUD__', baseUrl);
}

export async function deviceInstallRoutes(
  app: FastifyInstance,
  options: { ctx: CloudContext; downloadsAtOnce?: number },
): Promise<void> {
  const { ctx } = options;
  const limit = options.downloadsAtOnce ?? PUBLIC_DOWNLOADS_AT_ONCE;
  let downloading = 0;

  app.get('/api/device/install', async (_request, reply) =>
    reply
      .type('text/x-shellscript; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(installScript(ctx.baseUrl())),
  );

  app.get('/api/device/install/phone', async (_request, reply) =>
    reply
      .type('text/x-shellscript; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(installScript(ctx.baseUrl(), PHONE_SCRIPT)),
  );

  app.get('/api/device/releases/latest/:arch', async (request, reply) => {
    const { arch } = validate(archParams, request.params);
    const latest = await latestRelease(ctx, arch);
    reply.header('cache-control', 'no-store');
    return {
      release: latest.release,
      manifest: latest.manifest,
      url: `${ctx.baseUrl()}/api/device/releases/${latest.release.id}/release.tar.gz`,
    };
  });

  app.get('/api/device/releases/:id/release.tar.gz', async (request, reply) => {
    const { id } = validate(idParams, request.params);
    const release = await getRelease(ctx, id);
    if (downloading >= limit) {
      throw new ApiError('unavailable', { headers: { 'retry-after': '30' } });
    }
    downloading += 1;
    const body = Readable.from(bundleChunks(ctx, id));
    body.once('close', () => {
      downloading -= 1;
    });
    return reply
      .header('content-type', 'application/gzip')
      .header('content-length', String(release.size))
      .header(
        'content-disposition',
        `attachment; filename="gatelink-device-${release.version}-${release.arch}.tar.gz"`,
      )
      .send(body);
  });
}
