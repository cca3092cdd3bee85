import type { CloudContext } from '../../foundation/context.js';
import {
  type ClaimedMail,
  claimMails,
  type MailOutcome,
  recordMail,
} from '../../rules/mail-notifications/mail-outbox.js';
import { type Notice, readNotices } from '../../rules/notices/notice-kinds.js';
import { unsubscribeToken } from '../../rules/notification-choices/unsubscribe-token.js';
import { releaseNotices } from '../../rules/outboxes/notice-outbox.js';
import { fanOutBacklog } from '../../rules/push-notifications/journal-fan-out.js';
import type { Mailer } from './mailer.js';

/**
 * E-mails of openings to the people who asked for them (docs/design.md section 10.7), the way push delivery
 * sends notifications (cloud/links/web-push/push-delivery.ts): reads the journal past the shared cursor (the
 * one fan-out writes both outboxes, so either worker moves it), claims due rows with a lease (`claimMails`,
 * `for update skip locked`), hands each to the mail server, and writes what became of it. At least once: a
 * worker that stops gives its unsent rows back, one that dies leaves them to the others when the lease ends.
 * It reads the journal and never writes it, so it cannot slow an opening.
 */
export interface OpeningMailContext extends CloudContext {
  readonly mailer: Pick<Mailer, 'sendNotice'>;
}

export interface MailDeliveryOptions {
  /** Rows claimed at once; sent one after another, as one mail server takes them. */
  batchSize: number;
  /** How long one message may take at most: the mailer's own timeouts (cloud/links/mail/mailer.ts) and more. */
  sendTimeoutMs: number;
  /** How often the running worker looks at the journal and the outbox. */
  pollMs: number;
  /** Jitter of the retry schedule, in [0, 1); Math.random by default. */
  random?: () => number;
}

export const DEFAULT_MAIL_DELIVERY: MailDeliveryOptions = {
  batchSize: 16,
  sendTimeoutMs: 40_000,
  pollMs: 1_000,
};

/** Covers writing the results after a batch's last message. */
const LEASE_MARGIN_MS = 5_000;

/** The lease outlasts a batch whose every message takes its longest. */
export function mailLeaseMs(options: MailDeliveryOptions): number {
  return options.batchSize * options.sendTimeoutMs + LEASE_MARGIN_MS;
}

export interface MailTally {
  sent: number;
  failed: number;
  gaveUp: number;
}

/**
 * Fans the journal out, then sends what is due until nothing more is, and returns. What tests call to deliver
 * at a moment they choose, and what the running worker does at each look.
 */
export async function deliverDueMails(
  ctx: OpeningMailContext,
  options: Partial<MailDeliveryOptions> = {},
  stop?: AbortSignal,
): Promise<MailTally> {
  const settings = { ...DEFAULT_MAIL_DELIVERY, ...options };
  const tally: MailTally = { sent: 0, failed: 0, gaveUp: 0 };
  await fanOutBacklog(ctx);
  while (!stop?.aborted) {
    const batch = await claimMails(ctx, { limit: settings.batchSize, leaseMs: mailLeaseMs(settings) });
    if (batch.length === 0) break;
    const notices = await readNotices(ctx.db, batch);
    await sendBatch(ctx, { batch, notices }, settings, tally, stop);
  }
  return tally;
}

/** The batch, one message at a time; those not attempted before `stop` are given back. */
async function sendBatch(
  ctx: OpeningMailContext,
  { batch, notices }: { batch: readonly ClaimedMail[]; notices: ReadonlyMap<string, Notice> },
  options: MailDeliveryOptions,
  tally: MailTally,
  stop: AbortSignal | undefined,
): Promise<void> {
  const unsent: string[] = [];
  try {
    for (const mail of batch) {
      if (stop?.aborted) {
        unsent.push(mail.id);
        continue;
      }
      const outcome = await attemptMail(ctx, mail, notices.get(mail.id));
      const { gaveUp } = await recordMail(ctx, mail, outcome, options.random);
      if (outcome.kind === 'sent') tally.sent += 1;
      else tally.failed += 1;
      if (gaveUp) tally.gaveUp += 1;
      ctx.metrics.mailAttempt(mailResult(outcome, gaveUp));
    }
  } finally {
    await releaseNotices(ctx.db, 'opening_mail_outbox', unsent);
  }
}

/** How an attempt is counted in `gatelink_mail_attempts_total`: an account without an address is given up. */
export function mailResult(outcome: { kind: string }, gaveUp: boolean): 'sent' | 'failed' | 'gave_up' {
  if (gaveUp) return 'gave_up';
  return outcome.kind === 'sent' ? 'sent' : 'failed';
}

async function attemptMail(
  ctx: OpeningMailContext,
  mail: ClaimedMail,
  notice: Notice | undefined,
): Promise<MailOutcome> {
  if (!mail.email) return { kind: 'undeliverable' };
  // Its subject went in the moment since the claim; the row goes with it.
  if (!notice) return { kind: 'failed', error: 'what it tells of is gone' };
  const token = await unsubscribeToken(ctx.db, { deviceId: notice.deviceId, customerId: mail.customer_id });
  // What it says is chosen by its kind (cloud/rules/notices/notice-kinds.ts).
  const message = notice.mail({
    zone: mail.time_zone,
    baseUrl: ctx.baseUrl(),
    unsubscribeToken: token,
  });
  try {
    await ctx.mailer.sendNotice({ to: mail.email, ...message });
    return { kind: 'sent' };
  } catch (error) {
    return { kind: 'failed', error: error instanceof Error ? error.message : String(error) };
  }
}
