import { databaseOutage } from '../foundation/db/database-outage.js';
import { purgeRateCounters } from '../foundation/web/rate-counter.js';
import { purgeSessions } from '../foundation/web/sessions.js';
import { sweepExpired } from '../rules/access-keys/expiry.js';
import { purgeNonces } from '../rules/call-auth/nonces.js';
import { reconfirmDomainKeys } from '../rules/domain-keys/confirm.js';
import type { DomainKeysContext } from '../rules/domain-keys/domain-keys-context.js';
import { purgeEvents } from '../rules/events/delivery-store.js';
import { RETRY_WINDOW_MS } from '../rules/events/retry-schedule.js';
import { purgeIdempotencyKeys } from '../rules/idempotency/idempotency.js';
import { UnansweredOpenings } from '../rules/opening/unanswered.js';
import { purgeNotices } from '../rules/outboxes/notice-outbox.js';
import { purgeCeremonies } from '../rules/passkeys/challenges.js';
import { sweepGates } from '../rules/positions/gate-sweeps.js';
import { purgeGateAlerts } from '../rules/push-notifications/gate-alerts.js';
import { purgeEmailCodes } from '../rules/sign-in-codes/codes.js';
import { PeriodicJob } from './periodic-job.js';
import { receiptJobs } from './receipt-jobs.js';

/** The cloud's background jobs and how often each runs; cloud.ts starts them last and stops them first. */
export function backgroundJobs(ctx: DomainKeysContext, ackTimeoutMs: number): PeriodicJob[] {
  const outage = databaseOutage(ctx);
  const job = (name: string, intervalMs: number, run: () => Promise<unknown>) =>
    new PeriodicJob({ name, intervalMs, run, log: ctx.log, outage });
  const unanswered = new UnansweredOpenings(ctx, ackTimeoutMs);
  return [
    job('unanswered openings', 10_000, () => unanswered.settle()),
    job('expiry sweep', 30_000, () => sweepExpired(ctx)),
    // Often enough for the shortest move timeout a customer can set (5 s, docs/design.md section 5.2).
    job('gate sweeps', 5_000, () => sweepGates(ctx)),
    job('key re-confirmation', 60_000, () => reconfirmDomainKeys(ctx)),
    job('nonce purge', 60_000, () => purgeNonces(ctx)),
    job('idempotency purge', 600_000, () => purgeIdempotencyKeys(ctx)),
    job('session purge', 600_000, () => purgeSessions(ctx)),
    job('rate counter purge', 600_000, () => purgeRateCounters(ctx)),
    job('passkey ceremony purge', 60_000, () => purgeCeremonies(ctx)),
    job('e-mail code purge', 600_000, () => purgeEmailCodes(ctx)),
    job('event purge', 3_600_000, () => purgeEvents(ctx, RETRY_WINDOW_MS)),
    job('push purge', 3_600_000, () => purgeNotices(ctx, 'push_outbox')),
    job('opening mail purge', 3_600_000, () => purgeNotices(ctx, 'opening_mail_outbox')),
    job('digest purge', 3_600_000, () => purgeNotices(ctx, 'mail_digests')),
    job('company mail purge', 3_600_000, () => purgeNotices(ctx, 'company_mails')),
    job('gate alert purge', 3_600_000, () => purgeGateAlerts(ctx)),
    ...receiptJobs(ctx, job),
  ];
}
