import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import { cookiePolicy } from '../../foundation/web/cookies.js';
import { securityHeaders } from '../../foundation/web/security-headers.js';
import { isLogoHash, readLogo } from './logo-store.js';

/**
 * `GET /logos/<hash>.webp` (docs/design.md section 11.3): the companies' logos, from the service's own address,
 * as docs/design.md section 11.3 asks. Registered beside the static files, not under the pages: an image
 * needs no session or cookie. The name is the image's SHA-256, so the bytes behind an address never change
 * and browsers may keep them a year without asking again. The pages' security headers come along (nosniff
 * among them); the Content-Security-Policy does no harm to an image and guards the address if opened.
 */
const LOGO_FILE = /^([0-9a-f]{64})\.webp$/;

export async function logoRoute(app: FastifyInstance, options: { ctx: CloudContext }): Promise<void> {
  await securityHeaders(app, cookiePolicy(options.ctx.baseUrl()).secure);
  app.get<{ Params: { file: string } }>('/logos/:file', async (request, reply) => {
    const hash = LOGO_FILE.exec(request.params.file)?.[1];
    if (!hash || !isLogoHash(hash)) throw noSuchLogo();
    const image = await readLogo(options.ctx.db, hash);
    if (!image) throw noSuchLogo();
    return reply
      .type('image/webp')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .send(image);
  });
}

function noSuchLogo(): ApiError {
  return new ApiError('not_found', { message: 'There is no logo at this address.' });
}
