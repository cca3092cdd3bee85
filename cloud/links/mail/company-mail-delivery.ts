import type { CloudContext } from '../../foundation/context.js';
import {
  type ClaimedCompanyMail,
  type CompanyMailOutcome,
  claimCompanyMails,
  recordCompanyMail,
} from '../../rules/company-mails/company-mail-outbox.js';
import { companyMailWords } from '../../rules/company-mails/company-mail-words.js';
import { releaseNotices } from '../../rules/outboxes/notice-outbox.js';
import type { Mailer } from './mailer.js';
import {
  DEFAULT_MAIL_DELIVERY,
  type MailDeliveryOptions,
  type MailTally,
  mailLeaseMs,
  mailResult,
} from './opening-mail-delivery.js';

/**
 * The e-mails to companies' members (docs/design.md section 11.7), sent the way the e-mails of openings are
 * (./opening-mail-delivery.ts) and by the same worker, at each of its looks: claims due rows with a lease (`for
 * update skip locked`), hands each to the mail server and writes what became of it. At least once.
 */
export interface CompanyMailContext extends CloudContext {
  readonly mailer: Pick<Mailer, 'sendNotice'>;
}

/** Sends what is due until nothing more is, and returns. What tests call, and the mail worker at each look. */
export async function deliverDueCompanyMails(
  ctx: CompanyMailContext,
  options: Partial<MailDeliveryOptions> = {},
  stop?: AbortSignal,
): Promise<MailTally> {
  const settings = { ...DEFAULT_MAIL_DELIVERY, ...options };
  const tally: MailTally = { sent: 0, failed: 0, gaveUp: 0 };
  while (!stop?.aborted) {
    const batch = await claimCompanyMails(ctx, { limit: settings.batchSize, leaseMs: mailLeaseMs(settings) });
    if (batch.length === 0) break;
    const unsent: string[] = [];
    try {
      for (const mail of batch) {
        if (stop?.aborted) {
          unsent.push(mail.id);
          continue;
        }
        const outcome = await attemptMail(ctx, mail);
        const { gaveUp } = await recordCompanyMail(ctx, mail, outcome, settings.random);
        if (outcome.kind === 'sent') tally.sent += 1;
        else tally.failed += 1;
        if (gaveUp) tally.gaveUp += 1;
        ctx.metrics.mailAttempt(mailResult(outcome, gaveUp));
      }
    } finally {
      await releaseNotices(ctx.db, 'company_mails', unsent);
    }
  }
  return tally;
}

async function attemptMail(ctx: CompanyMailContext, mail: ClaimedCompanyMail): Promise<CompanyMailOutcome> {
  if (!mail.email) return { kind: 'dropped', why: 'the account has no confirmed e-mail address' };
  const words = companyMailWords(mail, ctx.baseUrl());
  if (!words) return { kind: 'dropped', why: 'the callback address was mended before the e-mail went' };
  try {
    await ctx.mailer.sendNotice({ to: mail.email, ...words });
    return { kind: 'sent' };
  } catch (error) {
    return { kind: 'failed', error: error instanceof Error ? error.message : String(error) };
  }
}
