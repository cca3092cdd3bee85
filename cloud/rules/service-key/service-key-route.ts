import type { FastifyInstance } from 'fastify';
import type { CloudContext } from '../../foundation/context.js';

/**
 * The service's own public key, in the same form companies publish theirs (docs/design.md section 6):
 * companies verify our webhook signatures with it, and controllers can compare it with the key they pinned.
 */
export async function serviceKeyRoute(app: FastifyInstance, options: { ctx: CloudContext }): Promise<void> {
  const body = JSON.stringify({ key: options.ctx.serviceKey.publicKey.base64 });
  app.get('/.well-known/service.json', async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=300').type('application/json').send(body);
  });
}
