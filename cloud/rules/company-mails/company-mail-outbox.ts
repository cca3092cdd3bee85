import { sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';
import type { CompanyMailKind } from '../../foundation/db/schema.js';
import { markNoticeFailed, markNoticeSent } from '../outboxes/notice-outbox.js';

/**
 * What the e-mails to a company's members keep in the database (docs/design.md section 11.7): a row per member
 * who has an account, written in the transaction of the change it tells (an operator's approval or refusal, the
 * delivery marking the callback address failing), so no change goes untold and no e-mail tells of a change
 * that was rolled back. Claimed `for update skip locked` with a lease and retried on the notices' schedule, then
 * given up (cloud/rules/outboxes/notice-outbox.ts), as the other outboxes are.
 */

/** Writes one e-mail of `kind` to each member of the company with an account; returns how many. */
export async function queueCompanyMail(
  db: Database,
  mail: { companyId: number; endpointId?: number; kind: CompanyMailKind; detail?: string | null; now: Date },
): Promise<number> {
  const result = await sql`
    insert into company_mails (company_id, endpoint_id, customer_id, kind, detail, created_at, next_attempt_at)
    select m.company_id, ${mail.endpointId ?? null}::integer, m.customer_id, ${mail.kind}, ${mail.detail ?? null},
           ${mail.now}, ${mail.now}
      from company_members m
     where m.company_id = ${mail.companyId} and m.customer_id is not null`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** A row a worker holds, with what its e-mail needs to say. */
export interface ClaimedCompanyMail {
  id: string;
  kind: CompanyMailKind;
  detail: string | null;
  company_id: number;
  company_name: string;
  /**
   * Since when the endpoint it tells of is failing, and at which address; null once it is not (changed, retried
   * or removed). A previous release's row names no endpoint, and reads the company's one address.
   */
  failing_since: Date | null;
  failing_url: string | null;
  customer_id: number;
  /** The member's confirmed address now; null when the account has none. */
  email: string | null;
  /** The member's zone, times are given in; UTC when they chose none. */
  time_zone: string;
  attempts: number;
  created_at: Date;
}

/** Gives this worker up to `limit` due rows for `leaseMs`, as the other outboxes' claims do. */
export async function claimCompanyMails(
  ctx: CloudContext,
  options: { limit: number; leaseMs: number },
): Promise<ClaimedCompanyMail[]> {
  const now = ctx.clock.now();
  const leaseUntil = new Date(now.getTime() + options.leaseMs);
  const { rows } = await sql<ClaimedCompanyMail>`
      with due as (
        select o.id, o.endpoint_id
          from company_mails o
         where o.sent_at is null and o.gave_up_at is null
           and o.next_attempt_at <= ${now}
           and (o.locked_until is null or o.locked_until <= ${now})
         order by o.next_attempt_at, o.id
         limit ${options.limit}
         for update of o skip locked
      )
      update company_mails o
         set locked_until = ${leaseUntil}
        from due left join endpoints e on e.id = due.endpoint_id, customers p, companies c
       where o.id = due.id and p.id = o.customer_id and c.id = o.company_id
      returning o.id, o.kind, o.detail, o.company_id, c.name as company_name,
                case when due.endpoint_id is null
                     then case when c.callback_failing_url = c.callback_url then c.callback_failing_since end
                     else case when e.failing_url = e.url then e.failing_since end end as failing_since,
                case when due.endpoint_id is null then c.callback_failing_url else e.failing_url end as failing_url,
                o.customer_id, o.attempts, o.created_at,
                case when p.email_verified_at is not null then p.email end as email,
                coalesce(p.time_zone, 'UTC') as time_zone`.execute(ctx.db);
  return rows;
}

/** What became of one e-mail. */
export type CompanyMailOutcome =
  | { kind: 'sent' }
  /** Nothing to send: the member has no confirmed address, or what it told is over. */
  | { kind: 'dropped'; why: string }
  | { kind: 'failed'; error: string };

/** Writes one attempt; returns whether the row was given up. */
export async function recordCompanyMail(
  ctx: CloudContext,
  mail: ClaimedCompanyMail,
  outcome: CompanyMailOutcome,
  random?: () => number,
): Promise<{ gaveUp: boolean }> {
  const now = ctx.clock.now();
  if (outcome.kind === 'sent') {
    await markNoticeSent(ctx.db, 'company_mails', mail.id, now);
    return { gaveUp: false };
  }
  const failed = outcome.kind === 'failed';
  const error = failed ? outcome.error : outcome.why;
  return markNoticeFailed(ctx.db, 'company_mails', mail, { error, retry: failed, now, random });
}
