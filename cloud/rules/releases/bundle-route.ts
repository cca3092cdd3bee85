import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { CloudContext } from '../../foundation/context.js';
import { MAX_ID, validate } from '../../foundation/http/validation.js';
import { deviceCallFrom } from '../devices/device-calls.js';
import { bundleChunks, getRelease } from './releases.js';

const idParams = z.object({ id: z.coerce.number().int().positive().max(MAX_ID) });

/**
 * `GET /api/device/releases/:id/bundle` (docs/design.md section 12.4.2): a controller downloads a bundle with a
 * call signed by its device key, streamed from the database one chunk at a time. Any provisioned controller may
 * download any release: what a release holds is public, what makes one run is the release key's signature.
 */
export async function bundleRoute(app: FastifyInstance, options: { ctx: CloudContext }): Promise<void> {
  const { ctx } = options;
  app.get('/api/device/releases/:id/bundle', async (request, reply) => {
    await deviceCallFrom(ctx, request);
    const { id } = validate(idParams, request.params);
    const release = await getRelease(ctx, id);
    return reply
      .header('content-type', 'application/gzip')
      .header('content-length', String(release.size))
      .send(Readable.from(bundleChunks(ctx, id)));
  });
}
