import type { FastifyInstance } from 'fastify';
import { ACTIONS, type Action } from '../../../shared/company-api/calls.js';
import { listenBodySchema } from '../../../shared/company-api/event-calls.js';
import { ApiError } from '../../../shared/errors.js';
import { BODY_LIMIT_BYTES } from '../../../shared/limits.js';
import { validate } from '../../foundation/http/validation.js';
import { countCompanyAnswers } from '../../foundation/metrics/company-answers.js';
import type { EventStreams } from '../../links/event-streams/event-streams.js';
import { answerOnceFresh, authenticate } from '../../rules/call-auth/authenticate.js';
import type { CallAuthContext } from '../../rules/call-auth/call-auth-context.js';
import { VerifyKeyCache } from '../../rules/domain-keys/verify-keys.js';
import { hashBody, readIdempotencyKey, type StoredAnswer } from '../../rules/idempotency/idempotency.js';
import type { CommandDispatcher } from '../../rules/opening/dispatcher.js';
import { Opener } from '../../rules/opening/open.js';
import type { QuestionWaits } from '../../rules/opening-questions/question-waits.js';
import { handleOpenIdempotently } from './open-idempotency.js';
import { handleRequest } from './request.js';
import { handleSandbox, markedSandbox, SANDBOX_HEADER } from './sandbox.js';
import { handleStatus } from './status.js';
import { handleTrigger } from './trigger.js';

/** Bodies over 16 KiB are refused before they are read in full (docs/design.md section 1). */
export const COMPANY_BODY_LIMIT = BODY_LIMIT_BYTES;

function readAction(query: unknown): Action {
  const action = (query as Record<string, unknown> | undefined)?.a;
  if (typeof action !== 'string' || !(ACTIONS as readonly string[]).includes(action)) {
    throw new ApiError('unknown_action');
  }
  return action as Action;
}

/**
 * `POST /api/company.php?a=request|status|open|trigger|listen`, version 1 for good (only additive changes). The
 * body is kept as raw bytes: a signature covers exactly the bytes sent. `listen` answers a stream of events
 * (cloud/links/event-streams/), ended when the client goes or the server closes.
 */
export async function companyApiRoutes(
  app: FastifyInstance,
  options: {
    ctx: CallAuthContext;
    dispatcher: CommandDispatcher;
    questions?: QuestionWaits;
    streams?: EventStreams;
  },
): Promise<void> {
  const { ctx, dispatcher, streams } = options;
  // A stream never ends on its own: a closing server ends them, or it would wait for every listener to go.
  if (streams) app.addHook('preClose', async () => streams.closeAll());
  const keys = new VerifyKeyCache();
  const opener = new Opener(ctx, dispatcher, undefined, options.questions);
  countCompanyAnswers(app, ctx.metrics);
  ctx.metrics.gauge(
    'openings_queued',
    'Openings under way on this instance, waits for a person aside; past OPEN_QUEUE_LIMIT one more is answered overloaded.',
    async () => opener.queued,
  );

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
    done(null, body),
  );

  app.post('/api/company.php', { bodyLimit: COMPANY_BODY_LIMIT }, async (request, reply) => {
    const action = readAction(request.query);
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    // `status` only reads: its nonce is decided beside the read (docs/design.md section 2.1).
    const caller = await authenticate(
      ctx,
      request.headers,
      raw,
      keys,
      action === 'status' ? 'reads' : 'writes',
    );
    // Every answer of the sandbox says so, errors too (docs/design.md section 11.9).
    if (caller.sandbox) reply.header(SANDBOX_HEADER, 'true');
    const idempotencyKey = readIdempotencyKey(request.headers['idempotency-key']);
    const idempotency =
      idempotencyKey === undefined ? undefined : { key: idempotencyKey, bodyHash: hashBody(raw) };
    let answer: StoredAnswer;
    switch (action) {
      case 'request':
        answer = await handleRequest(ctx, caller, idempotency);
        break;
      case 'status':
        answer = await answerOnceFresh(caller, handleStatus(ctx, caller));
        break;
      case 'open':
        answer = idempotency
          ? await handleOpenIdempotently(ctx, opener, caller, idempotency, request.log)
          : await opener.open(caller, request.log);
        break;
      case 'trigger':
        answer = await handleTrigger(ctx, caller);
        break;
      case 'sandbox':
        answer = await handleSandbox(ctx, caller);
        break;
      case 'listen': {
        validate(listenBodySchema, caller.body);
        if (!streams) throw new ApiError('unavailable');
        const stream = await streams.open(caller.company.id, { sandbox: caller.sandbox });
        return (
          reply
            .code(200)
            .header('content-type', 'text/event-stream; charset=utf-8')
            .header('cache-control', 'no-store')
            // nginx would otherwise buffer the stream (deploy/README.md).
            .header('x-accel-buffering', 'no')
            .send(stream)
        );
      }
    }
    return reply.code(answer.status).send(caller.sandbox ? markedSandbox(answer.body) : answer.body);
  });

  // Every call is a POST (cloud/README.md, "Calls"): another method on this path is told so, with
  // `Allow` as 405 requires (RFC 9110, 15.5.6), rather than answered as an unknown endpoint. OPTIONS too:
  // the API is for companies' servers, and a browser's preflight has nothing to be allowed.
  app.route({
    method: app.supportedMethods.filter((method) => method !== 'POST'),
    url: '/api/company.php',
    handler: async () => {
      throw new ApiError('method_not_allowed', { headers: { allow: 'POST' } });
    },
  });
}
