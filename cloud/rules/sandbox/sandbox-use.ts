import { sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import type { SandboxOutcome } from '../../foundation/db/schema.js';
import { failingNow } from '../events/delivery-log.js';

/**
 * How a company uses its sandbox (docs/design.md section 11.9), as the console, `GET /ops/companies/:id` and
 * `gatelink-admin company show` say it: when it was made, its requests and openings, the last opening, what
 * its barrier does with the next one, and where its events go. Null for a company that never called its sandbox.
 */
export interface SandboxUse {
  madeAt: Date;
  requests: number;
  openings: number;
  lastOpeningAt: Date | null;
  outcome: SandboxOutcome;
  /**
   * The sandbox's own endpoints, oldest first, each failing when an event went undelivered there through every
   * retry (section 6); none: its events go to `listen` only.
   */
  endpoints: { url: string; failing: boolean }[];
}

export async function sandboxUse(ctx: CloudContext, companyId: number): Promise<SandboxUse | null> {
  const row = await ctx.db
    .selectFrom('sandboxes')
    .innerJoin('companies', 'companies.id', 'sandboxes.company_id')
    .select([
      'sandboxes.created_at',
      'sandboxes.outcome',
      'companies.id as sandbox_id',
      sql<string>`(select count(*) from requests where requests.company_id = sandboxes.company_id)`.as(
        'requests',
      ),
      sql<string>`(select count(*) from journal where journal.company_id = sandboxes.company_id)`.as(
        'openings',
      ),
      sql<Date | null>`(select max(journal.at) from journal where journal.company_id = sandboxes.company_id)`.as(
        'last_opening_at',
      ),
    ])
    .where('companies.sandbox_of', '=', companyId)
    .executeTakeFirst();
  if (!row) return null;
  const endpoints = await ctx.db
    .selectFrom('endpoints')
    .select(['url', failingNow('endpoints').as('failing')])
    .where('company_id', '=', row.sandbox_id)
    .orderBy('id')
    .execute();
  return {
    madeAt: row.created_at,
    requests: Number(row.requests),
    openings: Number(row.openings),
    lastOpeningAt: row.last_opening_at === null ? null : new Date(row.last_opening_at),
    outcome: row.outcome,
    endpoints,
  };
}

/** The words of a sandbox's use, one line, the same in the console and the command line. */
export function sandboxUseWords(use: SandboxUse | null): string {
  if (!use) return 'never used';
  const requests = `${use.requests} ${use.requests === 1 ? 'request' : 'requests'}`;
  const openings = `${use.openings} ${use.openings === 1 ? 'opening' : 'openings'}`;
  const events =
    use.endpoints.length === 0
      ? 'events: no callback address'
      : `events to ${use.endpoints.map((endpoint) => `${endpoint.url}${endpoint.failing ? ', failing' : ''}`).join('; ')}`;
  return `${requests}, ${openings}; next openings: ${use.outcome.replaceAll('_', ' ')}; ${events}`;
}
