import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import type { NotificationTell } from '../../foundation/db/schema.js';
import { formText } from '../../foundation/web/form-input.js';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import { signedIn } from '../../foundation/web/web-deps.js';
import {
  type NotificationChoice,
  setChoice,
  TELL_CHOICES,
} from '../../rules/notification-choices/choices.js';
import { barrierId } from './barrier-address.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';

/**
 * "Tell me", on a barrier's page (docs/design.md section 10.7): what the reader is told of its openings, for
 * themselves only (the owner and each member choose apart, a member who may only look included), and whether by
 * e-mail too. A plain form; a value the form never sends is refused and nothing changes, and a barrier the reader
 * may not look at is 404 like one that does not exist.
 */
const TELL_WORDS: Record<NotificationTell, string> = {
  every: 'Every opening',
  refused: 'Only refused attempts',
  none: 'Nothing',
};

export function NotificationChoiceCard(props: {
  page: PageContext;
  barrierId: string;
  choice: NotificationChoice & { email: string | null };
}): VNode {
  const { choice } = props;
  return (
    <section class="card" aria-labelledby="tell-title">
      <h2 id="tell-title">Tell me</h2>
      <form method="post" action={`/barriers/${props.barrierId}/notifications`}>
        <CsrfField page={props.page} />
        <fieldset>
          <legend>What you are told of this barrier, on your devices with notifications on</legend>
          {TELL_CHOICES.map((tell) => (
            <label class="choice" key={tell}>
              <input type="radio" name="tell" value={tell} checked={choice.tell === tell} />
              {TELL_WORDS[tell]}
            </label>
          ))}
        </fieldset>
        <label class="choice">
          <input type="checkbox" name="by_email" value="1" checked={choice.byEmail} />
          Also by e-mail
        </label>
        <p class="hint">
          {choice.email
            ? `E-mails go to ${choice.email}; each has a link that stops them.`
            : 'Your account has no confirmed e-mail address, so no e-mail can be sent yet.'}{' '}
          The others who share this barrier choose for themselves.
        </p>
        <p class="actions">
          <button type="submit" class="secondary">
            Save
          </button>
        </p>
      </form>
    </section>
  );
}

/** The form as the card sends it: one of the choices, and the box ticked (1) or not sent. */
const CHOICE_FORM = z.object({
  tell: formText(z.enum(TELL_CHOICES)),
  by_email: z.preprocess((value) => value ?? '', formText(z.enum(['', '1']))),
});

export async function notificationChoiceRoutes(app: FastifyInstance, deps: CustomerPagesDeps): Promise<void> {
  app.post('/barriers/:id/notifications', async (request, reply) => {
    const customer = signedIn(request, reply)!;
    const deviceId = barrierId(request);
    const form = CHOICE_FORM.safeParse(request.body ?? {});
    // The card offers nothing else: whatever else arrives was not typed by a person.
    if (!form.success)
      throw new ApiError('invalid_field', { field: 'tell', message: 'Choose what you are told.' });
    await setChoice(deps.ctx.db, {
      customerId: customer.customerId,
      deviceId,
      choice: { tell: form.data.tell, byEmail: form.data.by_email === '1' },
      now: deps.ctx.clock.now(),
    });
    return reply.redirect(`/barriers/${deviceId}?notifications=1`, 303);
  });
}
