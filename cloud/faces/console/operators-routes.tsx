import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { MAX_ID } from '../../foundation/http/validation.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { formText, parseForm, textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import { operatorRightsActions } from '../../rules/operators/actions.js';
import { grantOperator, listOperatorAccounts, withdrawOperator } from '../../rules/operators/operators.js';
import { emailAddress } from '../../rules/sign-in-codes/email-address.js';
import { type ConsoleDeps, type ConsoleOperator, operatorOf } from './console-access.js';
import { OperatorsPage } from './operators-page.js';

/**
 * Operator accounts (docs/design.md section 11.5). Every operator sees who has rights; only the token grants and
 * withdraws them, so that one operator account, taken over, cannot make more.
 */
const grantForm = z.object({
  email: formText(z.string().trim().min(1, 'Enter their e-mail address').pipe(emailAddress)),
});
const accountParams = z.object({ customerId: z.coerce.number().int().positive().max(MAX_ID) });

function tokenOperator(request: FastifyRequest): ConsoleOperator {
  const operator = operatorOf(request);
  if (!operator.viaToken) {
    throw new ApiError('operator_required', {
      message: 'Only a console signed in with the operator token grants and withdraws operator rights.',
    });
  }
  return operator;
}

export async function operatorsRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { ctx } = deps;

  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    extra: { notice?: string; email?: string; errors?: FieldErrors } = {},
    status = 200,
  ) =>
    sendPage(
      reply,
      <OperatorsPage
        page={pageContext(request, reply)}
        operator={operatorOf(request)}
        accounts={await listOperatorAccounts(ctx)}
        actions={await operatorRightsActions(ctx)}
        {...extra}
      />,
      status,
    );

  app.get('/console/operators', async (request, reply) => show(request, reply));

  app.post('/console/operators', async (request, reply) => {
    const operator = tokenOperator(request);
    const email = textField(request.body, 'email');
    const form = parseForm(grantForm, request.body);
    if (!form.ok) return show(request, reply, { email, errors: form.errors }, 400);
    const granted = await onForm(reply, ['not_found'], () => grantOperator(ctx, form.value.email, operator));
    if (!granted.ok)
      return show(request, reply, { email, errors: { email: granted.message } }, granted.status);
    const { account, added } = granted.value;
    const notice = added
      ? `${account.displayName} is now an operator: they sign in at /signin with their own passkey and open /console.`
      : `${account.displayName} is an operator already.`;
    return show(request, reply, { notice });
  });

  app.post('/console/operators/:customerId/withdraw', async (request, reply) => {
    const operator = tokenOperator(request);
    const params = accountParams.safeParse(request.params);
    if (!params.success)
      throw new ApiError('not_found', { message: 'There is no operator at this address.' });
    await withdrawOperator(ctx, params.data.customerId, operator);
    return reply.redirect('/console/operators', 303);
  });
}
