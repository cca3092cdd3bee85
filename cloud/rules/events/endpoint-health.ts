import type { Database } from '../../foundation/db/database.js';
import { CHOOSABLE_KINDS } from './callback-kinds.js';
import { failingNow } from './delivery-log.js';

/**
 * How a company's events fare, in one line for operators (docs/design.md sections 6.2 and 11.5): the console's
 * list of companies and its company page, and `gatelink-admin events`, say it in these words. Read for every
 * listed company in one query, so a list of hundreds costs one round trip.
 */
export interface EndpointHealth {
  /** The kinds it takes; null for every kind. */
  kinds: string[] | null;
  /** Failing at its current address: nothing is sent there until it changes or a retry is asked. */
  failing: boolean;
}

/** The endpoints of each of the companies, oldest first; a company without one is missing from the map. */
export async function endpointHealth(
  db: Database,
  companyIds: readonly number[],
): Promise<Map<number, EndpointHealth[]>> {
  const health = new Map<number, EndpointHealth[]>();
  if (companyIds.length === 0) return health;
  const rows = await db
    .selectFrom('endpoints')
    .select(['company_id', 'kinds', failingNow('endpoints').as('failing')])
    .where('company_id', 'in', [...companyIds])
    .orderBy('company_id')
    .orderBy('id')
    .execute();
  for (const row of rows) {
    const endpoints = health.get(row.company_id) ?? [];
    endpoints.push({ kinds: row.kinds, failing: row.failing });
    health.set(row.company_id, endpoints);
  }
  return health;
}

/** The line's words, after "Events: ". */
export function endpointHealthWords(endpoints: readonly EndpointHealth[]): string {
  const [only, ...others] = endpoints;
  if (!only) return 'no callback address, nothing is sent';
  if (others.length === 0) {
    if (only.failing) return 'failing, nothing is sent until it is fixed or retried';
    const kinds = only.kinds;
    return `sent to its callback address, ${kinds === null ? 'every kind' : `${kinds.length} ${kinds.length === 1 ? 'kind' : 'kinds'} of ${CHOOSABLE_KINDS.length}`}`;
  }
  const failing = endpoints.filter((endpoint) => endpoint.failing).length;
  const count = `${endpoints.length} endpoints`;
  if (failing === 0) return `${count}, none failing`;
  return `${count}, ${failing} failing: nothing is sent to ${failing === 1 ? 'it until it is' : 'them until they are'} fixed or retried`;
}
