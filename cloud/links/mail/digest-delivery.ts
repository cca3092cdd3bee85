import type { CloudContext } from '../../foundation/context.js';
import { digestEntries } from '../../rules/mail-notifications/digest-entries.js';
import { digestMail } from '../../rules/mail-notifications/digest-mail.js';
import {
  type ClaimedDigest,
  claimDigests,
  type DigestOutcome,
  planDigests,
  recordDigest,
} from '../../rules/mail-notifications/digest-outbox.js';
import {
  digestUnsubscribeToken,
  unsubscribeToken,
} from '../../rules/notification-choices/unsubscribe-token.js';
import { releaseNotices } from '../../rules/outboxes/notice-outbox.js';
import type { Mailer } from './mailer.js';
import { mailResult } from './opening-mail-delivery.js';

/**
 * The daily digests (docs/design.md section 10.7), sent the way the e-mails of openings are
 * (./opening-mail-delivery.ts): each look plans the digests due (a row per person and day, unique, so several
 * instances plan one), claims them with a lease (`for update skip locked`), reads each person's day from the
 * journal, and hands the e-mail to the mail server, or records that the day had nothing to tell. It reads the
 * journal and never writes it.
 */
export interface DigestContext extends CloudContext {
  readonly mailer: Pick<Mailer, 'sendNotice'>;
}

export interface DigestDeliveryOptions {
  /** Digests claimed at once; sent one after another. */
  batchSize: number;
  /** How long one message may take at most: the mailer's own timeouts (./mailer.ts) and more. */
  sendTimeoutMs: number;
  /** How often the running worker looks; a digest goes this long after 07:00 at most. */
  pollMs: number;
  /** Jitter of the retry schedule, in [0, 1); Math.random by default. */
  random?: () => number;
}

export const DEFAULT_DIGEST_DELIVERY: DigestDeliveryOptions = {
  batchSize: 16,
  sendTimeoutMs: 40_000,
  pollMs: 30_000,
};

/** Covers reading the day and writing the results after a batch's last message. */
const LEASE_MARGIN_MS = 30_000;

export function digestLeaseMs(options: DigestDeliveryOptions): number {
  return options.batchSize * options.sendTimeoutMs + LEASE_MARGIN_MS;
}

export interface DigestTally {
  sent: number;
  empty: number;
  failed: number;
  gaveUp: number;
}

/** Plans, then sends what is due until nothing more is. What tests call, and the worker at each look. */
export async function deliverDueDigests(
  ctx: DigestContext,
  options: Partial<DigestDeliveryOptions> = {},
  stop?: AbortSignal,
): Promise<DigestTally> {
  const settings = { ...DEFAULT_DIGEST_DELIVERY, ...options };
  const tally: DigestTally = { sent: 0, empty: 0, failed: 0, gaveUp: 0 };
  await planDigests(ctx);
  while (!stop?.aborted) {
    const batch = await claimDigests(ctx, { limit: settings.batchSize, leaseMs: digestLeaseMs(settings) });
    if (batch.length === 0) break;
    await sendBatch(ctx, batch, settings, tally, stop);
  }
  return tally;
}

/** The batch, one message at a time; those not attempted before `stop` are given back. */
async function sendBatch(
  ctx: DigestContext,
  batch: readonly ClaimedDigest[],
  options: DigestDeliveryOptions,
  tally: DigestTally,
  stop: AbortSignal | undefined,
): Promise<void> {
  const unsent: string[] = [];
  try {
    for (const digest of batch) {
      if (stop?.aborted) {
        unsent.push(digest.id);
        continue;
      }
      const outcome = await attemptDigest(ctx, digest);
      const { gaveUp } = await recordDigest(ctx, digest, outcome, options.random);
      count(ctx, tally, outcome, gaveUp);
    }
  } finally {
    await releaseNotices(ctx.db, 'mail_digests', unsent);
  }
}

function count(ctx: DigestContext, tally: DigestTally, outcome: DigestOutcome, gaveUp: boolean): void {
  if (outcome.kind === 'empty') {
    tally.empty += 1;
    return;
  }
  if (outcome.kind === 'sent') tally.sent += 1;
  else tally.failed += 1;
  if (gaveUp) tally.gaveUp += 1;
  ctx.metrics.mailAttempt(mailResult(outcome, gaveUp));
}

async function attemptDigest(ctx: DigestContext, digest: ClaimedDigest): Promise<DigestOutcome> {
  if (!digest.email) return { kind: 'undeliverable' };
  const zone = digest.time_zone;
  const barriers = await digestEntries(ctx.db, { customerId: digest.customer_id, day: digest.day, zone });
  if (barriers.length === 0) return { kind: 'empty' };
  const barrierTokens = new Map<string, string>();
  for (const barrier of barriers) {
    const target = { deviceId: barrier.deviceId, customerId: digest.customer_id };
    barrierTokens.set(barrier.deviceId, await unsubscribeToken(ctx.db, target));
  }
  const message = digestMail({
    day: digest.day,
    zone,
    barriers,
    baseUrl: ctx.baseUrl(),
    digestToken: await digestUnsubscribeToken(ctx.db, digest.customer_id),
    barrierTokens,
  });
  try {
    await ctx.mailer.sendNotice({ to: digest.email, ...message });
    const lines = barriers.reduce((sum, barrier) => sum + barrier.entries.length, 0);
    return { kind: 'sent', lines };
  } catch (error) {
    return { kind: 'failed', error: error instanceof Error ? error.message : String(error) };
  }
}
