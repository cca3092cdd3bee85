import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../shared/errors.js';
import type { CloudContext } from '../../foundation/context.js';
import type { NotFoundPage } from '../../foundation/http/errors.js';
import { ErrorPage } from '../../foundation/web/error-page.js';
import { sendPage } from '../../foundation/web/page.js';

/**
 * A browser that asks for a page that does not exist gets a page that says so, with the way back; API clients
 * keep the JSON 404 of cloud/foundation/http/errors.ts. It is drawn outside the pages' own context, so it names nobody
 * signed in and carries no forms.
 */
export function notFoundPage(_ctx: CloudContext): NotFoundPage {
  return (request: FastifyRequest, reply: FastifyReply) => {
    const error = new ApiError('not_found', { message: 'There is no page at this address.' });
    return sendPage(
      reply,
      ErrorPage({
        page: { customer: null, csrfToken: '' },
        status: 404,
        message: error.message,
        requestId: request.id,
      }),
      404,
    );
  };
}
