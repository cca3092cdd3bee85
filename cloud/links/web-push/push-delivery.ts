import { type Notice, readNotices } from '../../rules/notices/notice-kinds.js';
import { releaseNotices } from '../../rules/outboxes/notice-outbox.js';
import { fanOutBacklog } from '../../rules/push-notifications/journal-fan-out.js';
import {
  type ClaimedPush,
  claimPushes,
  type PushOutcome,
  recordPush,
} from '../../rules/push-notifications/push-outbox.js';
import { recordSentPushes } from '../../rules/push-notifications/sent-pushes.js';
import type { VapidContext } from '../../rules/vapid-key/vapid-key-file.js';
import { vapidSubject } from '../../rules/vapid-key/vapid-subject.js';
import { type PushConnection, postPush } from './push-post.js';

/**
 * Delivers notifications of openings to the customers' browsers (docs/design.md section 10.6): reads the
 * journal past its cursor into the outbox (rules/push-notifications/journal-fan-out.ts), claims due rows with
 * a lease (`claimPushes`, `for update skip locked`), sends each through its push service, and writes what
 * became of it: sent, the subscription gone (404 or 410: removed), or failed and retried with backoff until
 * given up. At least once: a worker that stops gives its unsent rows back, and one that dies leaves them to
 * the others when their lease ends. It reads the journal and never writes it, so it cannot slow an opening.
 */
export interface PushDeliveryOptions extends PushConnection {
  /** Pushes sent at once. */
  concurrency: number;
  /** Rows claimed at once. */
  batchSize: number;
  /** How often the running worker looks at the journal and the outbox. */
  pollMs: number;
  /** Jitter of the retry schedule, in [0, 1); Math.random by default. */
  random?: () => number;
  /** Awaited before each claim: the running worker gives way to openings under way (cloud/components.ts). */
  giveWay?: () => Promise<void>;
}

export const DEFAULT_PUSH_DELIVERY: PushDeliveryOptions = {
  allowPrivateAddresses: false,
  timeoutMs: 10_000,
  concurrency: 16,
  batchSize: 64,
  pollMs: 1_000,
};

/** Covers writing the results after a batch's last attempt ended. */
const LEASE_MARGIN_MS = 5_000;

/** A batch is sent `concurrency` at a time, each within `timeoutMs`: the lease outlasts the slowest batch. */
export function pushLeaseMs(options: PushDeliveryOptions): number {
  return Math.ceil(options.batchSize / options.concurrency) * options.timeoutMs + LEASE_MARGIN_MS;
}

export interface PushTally {
  sent: number;
  gone: number;
  failed: number;
  gaveUp: number;
}

/**
 * Fans the journal out, then sends what is due until nothing more is, and returns. What tests call to deliver
 * at a moment they choose, and what the running worker does at each look.
 */
export async function deliverDuePushes(
  ctx: VapidContext,
  options: Partial<PushDeliveryOptions> = {},
  stop?: AbortSignal,
): Promise<PushTally> {
  const settings = { ...DEFAULT_PUSH_DELIVERY, ...options };
  const tally: PushTally = { sent: 0, gone: 0, failed: 0, gaveUp: 0 };
  await fanOutBacklog(ctx);
  while (!stop?.aborted) {
    await settings.giveWay?.();
    const batch = await claimPushes(ctx, { limit: settings.batchSize, leaseMs: pushLeaseMs(settings) });
    if (batch.length === 0) break;
    const notices = await readNotices(ctx.db, batch);
    await sendBatch(ctx, { batch, notices }, settings, tally, stop);
  }
  return tally;
}

/** The batch, `concurrency` at a time; rows not attempted, or cut short by `stop`, are given back. */
async function sendBatch(
  ctx: VapidContext,
  { batch, notices }: { batch: readonly ClaimedPush[]; notices: ReadonlyMap<string, Notice> },
  options: PushDeliveryOptions,
  tally: PushTally,
  stop: AbortSignal | undefined,
): Promise<void> {
  const waiting = [...batch];
  const unsent: string[] = [];
  const sent: ClaimedPush[] = [];
  const lane = async () => {
    for (let push = waiting.shift(); push; push = waiting.shift()) {
      if (stop?.aborted) {
        unsent.push(push.id);
        continue;
      }
      const outcome = await attemptPush(ctx, { push, notice: notices.get(push.id) }, options, stop);
      if (stop?.aborted) {
        unsent.push(push.id);
        continue;
      }
      if (outcome.kind === 'sent') {
        sent.push(push);
        continue;
      }
      const { gaveUp } = await recordPush(ctx, push, outcome, options.random);
      count(ctx, tally, outcome, gaveUp);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(options.concurrency, batch.length) }, lane));
  } finally {
    await releaseNotices(ctx.db, 'push_outbox', unsent);
    // The taken ones in one write for the batch (rules/push-notifications/sent-pushes.ts).
    await recordSentPushes(ctx, sent);
  }
  for (const _sent of sent) count(ctx, tally, { kind: 'sent', status: 201 }, false);
}

async function attemptPush(
  ctx: VapidContext,
  { push, notice }: { push: ClaimedPush; notice: Notice | undefined },
  options: PushDeliveryOptions,
  stop: AbortSignal | undefined,
): Promise<PushOutcome> {
  // Its subject went in the moment since the claim; the row goes with it.
  if (!notice) return { kind: 'failed', status: null, error: 'what it tells of is gone' };
  const baseUrl = ctx.baseUrl();
  // What it says is chosen by its kind (cloud/rules/notices/notice-kinds.ts).
  const payload = JSON.stringify(notice.push({ baseUrl, zone: push.time_zone }));
  const signer = { vapid: ctx.vapid, subject: vapidSubject(ctx.config.vapidSubject, baseUrl) };
  const result = await postPush(push, payload, signer, options, stop);
  if (result.error === null) return { kind: 'sent', status: result.status ?? 201 };
  if (result.status === 404 || result.status === 410) return { kind: 'gone', status: result.status };
  return { kind: 'failed', status: result.status, error: result.error };
}

function count(ctx: VapidContext, tally: PushTally, outcome: PushOutcome, gaveUp: boolean): void {
  if (outcome.kind === 'sent') tally.sent += 1;
  else if (outcome.kind === 'gone') tally.gone += 1;
  else tally.failed += 1;
  if (gaveUp) tally.gaveUp += 1;
  ctx.metrics.pushAttempt(gaveUp ? 'gave_up' : outcome.kind);
}
