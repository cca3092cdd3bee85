import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext, signedIn } from '../../foundation/web/web-deps.js';
import { questionView } from '../../rules/opening-questions/question-view.js';
import { answerQuestion, type GivenAnswer } from '../../rules/opening-questions/questions.js';
import { barrierId, pathNumber } from './barrier-address.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';
import { QuestionPage } from './question-page.js';

/** What the forms post: Allow and Deny (section 10.8), or Call the gate (section 10.9), nothing else. */
const ANSWER_FORM = z.object({ answer: z.enum(['allow', 'deny', 'call']) });

const GIVEN: Readonly<Record<z.infer<typeof ANSWER_FORM>['answer'], GivenAnswer>> = {
  allow: 'allowed',
  deny: 'denied',
  call: 'called',
};

const NO_SUCH_QUESTION = 'No such question on this barrier.';

/**
 * "Ask me before each opening", answered (docs/design.md section 10.8): the question's page for anyone of the
 * barrier's household, and its one CSRF-checked form for whoever may grant. Another account, or a member who may
 * only look, posting it is answered 404 like a barrier that does not exist, and nothing changes.
 */
export async function questionRoutes(app: FastifyInstance, deps: CustomerPagesDeps): Promise<void> {
  const { ctx } = deps;

  app.get('/barriers/:id/questions/:entry', async (request, reply) => {
    const customer = signedIn(request, reply);
    if (!customer) return reply;
    return show(request, reply, customer.customerId);
  });

  app.post('/barriers/:id/questions/:entry', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const deviceId = barrierId(request);
    const journalId = entryParam(request);
    const form = ANSWER_FORM.safeParse(request.body);
    if (!form.success) {
      throw new ApiError('invalid_field', { field: 'answer', message: 'Answer with Allow or Deny.' });
    }
    const now = ctx.clock.now();
    const answered = await answerQuestion(ctx.db, {
      customerId: customer.customerId,
      deviceId,
      journalId,
      answer: GIVEN[form.data.answer],
      now,
    });
    const path = `/barriers/${encodeURIComponent(deviceId)}/questions/${journalId}`;
    const tapped =
      answered.kind === 'answered' ? answered.answer === 'called' : answered.settled.answer === 'called';
    if (tapped) {
      // The tap is written (or someone's came first, and calling again does no harm): the phone dials the gate.
      const question = await questionView(ctx.db, {
        customerId: customer.customerId,
        deviceId,
        journalId,
        now,
      });
      if (question?.gateNumber) return reply.redirect(`tel:${question.gateNumber}`, 303);
    }
    // The page says what counts: this answer, or the one that came first.
    return reply.redirect(path, 303);
  });

  async function show(
    request: FastifyRequest,
    reply: FastifyReply,
    customerId: number,
  ): Promise<FastifyReply> {
    const deviceId = barrierId(request);
    const journalId = entryParam(request);
    const question = await questionView(ctx.db, { customerId, deviceId, journalId, now: ctx.clock.now() });
    if (!question) throw new ApiError('not_found', { message: NO_SUCH_QUESTION });
    const path = `/barriers/${encodeURIComponent(deviceId)}/questions/${journalId}`;
    return sendPage(
      reply,
      <QuestionPage page={pageContext(request, reply)} question={question} path={path} />,
    );
  }
}

function entryParam(request: FastifyRequest): number {
  return pathNumber(request, 'entry', NO_SUCH_QUESTION);
}
