import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import type { NotificationTell } from '../../foundation/db/schema.js';
import { formText } from '../../foundation/web/form-input.js';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import { useReaderZone, zoneWords } from '../../foundation/web/readable-time.js';
import { signedIn } from '../../foundation/web/web-deps.js';
import {
  EMAIL_CHOICES,
  type EmailChoice,
  type NotificationChoice,
  setChoice,
  TELL_CHOICES,
} from '../../rules/notification-choices/choices.js';
import { QUIET_TIME, type QuietHours } from '../../rules/notification-choices/quiet-hours.js';
import { barrierId } from './barrier-address.js';
import type { CustomerPagesDeps } from './customer-pages-context.js';

/**
 * "Tell me", on a barrier's page (docs/design.md section 10.7): what the reader is told of its openings, for
 * themselves only (the owner and each member choose apart, a member who may only look included), whether by
 * e-mail too (each, or one a day), and quiet hours in their own zone. A plain form; a value the form never sends is refused and nothing changes, and a barrier the reader
 * may not look at is 404 like one that does not exist.
 */
const TELL_WORDS: Record<NotificationTell, string> = {
  every: 'Every opening',
  refused: 'Only refused attempts',
  none: 'Nothing',
};

const EMAIL_WORDS: Record<EmailChoice, string> = {
  none: 'No e-mail',
  each: 'An e-mail for each',
  daily: 'One e-mail a day, at 07:00, of the day before',
};

export function NotificationChoiceCard(props: {
  page: PageContext;
  barrierId: string;
  choice: NotificationChoice & { address: string | null };
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
        <fieldset>
          <legend>Also by e-mail</legend>
          {EMAIL_CHOICES.map((email) => (
            <label class="choice" key={email}>
              <input type="radio" name="email" value={email} checked={choice.email === email} />
              {EMAIL_WORDS[email]}
            </label>
          ))}
        </fieldset>
        <AlertFields choice={choice} />
        <QuietHoursFields quiet={choice.quiet} />
        <p class="hint">
          {choice.address
            ? `E-mails go to ${choice.address}; each has a link that stops them.`
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

/**
 * The two alerts beyond openings (docs/design.md section 10.7), each on unless unticked. `alerts` says the page
 * had the boxes: a box left unticked is not sent at all.
 */
function AlertFields(props: { choice: NotificationChoice }): VNode {
  return (
    <fieldset>
      <legend>Also tell me of</legend>
      <input type="hidden" name="alerts" value="1" />
      <label class="choice">
        <input type="checkbox" name="left_open" value="1" checked={props.choice.leftOpen} />A gate left open
      </label>
      <label class="choice">
        <input type="checkbox" name="access_changes" value="1" checked={props.choice.accessChanges} />
        Access granted or withdrawn by someone else
      </label>
    </fieldset>
  );
}

/**
 * Quiet hours, in the reader's account zone: the page's frame provides it (the reader's zone is their account's).
 * Both empty is none.
 */
function QuietHoursFields(props: { quiet: QuietHours | null }): VNode {
  const zone = useReaderZone();
  return (
    <fieldset>
      <legend>Quiet hours</legend>
      <div class="times">
        <label for="quiet-from">From</label>
        <input type="time" id="quiet-from" name="quiet_from" value={props.quiet?.from ?? ''} />
        <label for="quiet-until">Until</label>
        <input type="time" id="quiet-until" name="quiet_until" value={props.quiet?.until ?? ''} />
      </div>
      <p class="hint">
        Times in your zone, {zoneWords(zone)}; 22:00 until 07:00 spans the night. Meanwhile nothing of this
        barrier reaches you by notification or e-mail of each; the journal and the daily e-mail still list it.
        Leave both empty for none.
      </p>
    </fieldset>
  );
}

const QUIET_FIELD = formText(z.union([z.literal(''), z.string().regex(QUIET_TIME)]));

/**
 * The form as the card sends it: one of the choices, one of the e-mail choices, and the quiet hours' two times
 * or none. The card of the previous release sent a ticked box, `by_email=1`, and no `email`: a page it rendered
 * may still be posted during a rolling upgrade (docs/design.md section 8.2), and means an e-mail for each.
 */
const CHOICE_FORM = z.object({
  tell: formText(z.enum(TELL_CHOICES)),
  email: formText(z.enum(['', ...EMAIL_CHOICES])),
  by_email: formText(z.enum(['', '1'])),
  quiet_from: QUIET_FIELD,
  quiet_until: QUIET_FIELD,
  alerts: formText(z.enum(['', '1'])),
  left_open: formText(z.enum(['', '1'])),
  access_changes: formText(z.enum(['', '1'])),
});

type ChoiceForm = z.infer<typeof CHOICE_FORM>;

function emailOf(form: ChoiceForm): EmailChoice {
  if (form.email !== '') return form.email;
  return form.by_email === '1' ? 'each' : 'none';
}

/** The alert boxes; a page without them (the previous release's) keeps them on, as they were. */
function alertsOf(form: ChoiceForm): Pick<NotificationChoice, 'leftOpen' | 'accessChanges'> {
  if (form.alerts !== '1') return { leftOpen: true, accessChanges: true };
  return { leftOpen: form.left_open === '1', accessChanges: form.access_changes === '1' };
}

/** Both times or neither, and a span that ends at another time than it starts; refused otherwise. */
function quietOf(form: ChoiceForm): QuietHours | null {
  if (form.quiet_from === '' && form.quiet_until === '') return null;
  if (form.quiet_from === '' || form.quiet_until === '')
    throw new ApiError('invalid_field', {
      field: form.quiet_from === '' ? 'quiet_from' : 'quiet_until',
      message: 'Give both times of the quiet hours, or neither.',
    });
  if (form.quiet_from === form.quiet_until)
    throw new ApiError('invalid_field', {
      field: 'quiet_until',
      message: 'Quiet hours end at another time than they start.',
    });
  return { from: form.quiet_from, until: form.quiet_until };
}

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
      choice: {
        tell: form.data.tell,
        email: emailOf(form.data),
        quiet: quietOf(form.data),
        ...alertsOf(form.data),
      },
      now: deps.ctx.clock.now(),
    });
    return reply.redirect(`/barriers/${deviceId}?notifications=1`, 303);
  });
}
