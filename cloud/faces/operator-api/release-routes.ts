import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { DEVICE_ID_PATTERN } from '../../../shared/protocol/topics.js';
import { RELEASE_MAX_BYTES } from '../../../shared/releases/manifest.js';
import { MAX_ID, validate } from '../../foundation/http/validation.js';
import { checkedManifest, listReleases, storeRelease } from '../../rules/releases/releases.js';
import {
  DEFAULT_MAX_ROLLBACK_SHARE,
  getRollout,
  listRollouts,
  pauseRollout,
  resumeRollout,
  rolloutDevices,
  startRollout,
} from '../../rules/rollouts/rollouts.js';
import type { OperatorApiContext } from './operator-api-context.js';

/**
 * Releases and rollouts in the operator API (docs/design.md section 12.4.2), behind the operator bearer of the
 * routes that register this. An upload's body is the bundle itself, read as a stream (never parsed or held
 * whole); its signed manifest comes base64 in the `gatelink-release-manifest` header.
 */
export const RELEASE_MANIFEST_HEADER = 'gatelink-release-manifest';

const idParams = z.object({ id: z.coerce.number().int().positive().max(MAX_ID) });
const rolloutBody = z.strictObject({
  release_id: z.number().int().positive().max(MAX_ID),
  target: z.union([
    z.literal('all'),
    z.strictObject({ percent: z.number().int().min(1).max(100) }),
    z.strictObject({ devices: z.array(z.string().regex(DEVICE_ID_PATTERN)).min(1).max(10_000) }),
  ]),
  allow_downgrade: z.boolean().default(false),
  max_rollback_share: z.number().min(0).max(1).default(DEFAULT_MAX_ROLLBACK_SHARE),
});

export async function releaseRoutes(
  app: FastifyInstance,
  options: { ctx: OperatorApiContext },
): Promise<void> {
  const { ctx } = options;
  // Scoped to this plugin: the bundle reaches the route as the request stream.
  app.addContentTypeParser('application/gzip', (_request, payload, done) => done(null, payload));

  app.post('/ops/releases', async (request, reply) => {
    const length = Number(request.headers['content-length'] ?? Number.NaN);
    if (length > RELEASE_MAX_BYTES) {
      throw new ApiError('too_large', {
        message: `A release bundle may be at most ${RELEASE_MAX_BYTES} bytes.`,
      });
    }
    const header = request.headers[RELEASE_MANIFEST_HEADER];
    const signed = checkedManifest(ctx, typeof header === 'string' ? header : undefined);
    if (request.headers['content-type'] !== 'application/gzip')
      throw new ApiError('unsupported_media_type', {
        message: 'Send the bundle with Content-Type: application/gzip.',
      });
    const release = await storeRelease(ctx, signed, request.raw);
    return reply.code(201).send({ release });
  });

  app.get('/ops/releases', async () => ({ releases: await listReleases(ctx) }));

  app.post('/ops/rollouts', async (request, reply) => {
    const body = validate(rolloutBody, request.body);
    const started = await startRollout(ctx, {
      releaseId: body.release_id,
      target: body.target,
      allowDowngrade: body.allow_downgrade,
      maxRollbackShare: body.max_rollback_share,
    });
    return reply.code(201).send(started);
  });

  app.get('/ops/rollouts', async () => ({ rollouts: await listRollouts(ctx) }));

  app.get('/ops/rollouts/:id', async (request) => {
    const { id } = validate(idParams, request.params);
    return { rollout: await getRollout(ctx, id), devices: await rolloutDevices(ctx, id) };
  });

  app.post('/ops/rollouts/:id/pause', async (request) => {
    const { id } = validate(idParams, request.params);
    return { rollout: await pauseRollout(ctx, id) };
  });

  app.post('/ops/rollouts/:id/resume', async (request) => {
    const { id } = validate(idParams, request.params);
    return { rollout: await resumeRollout(ctx, id) };
  });
}
