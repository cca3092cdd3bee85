import type { ExpressionBuilder } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import { escapeLike } from '../../foundation/db/like-pattern.js';
import type { DB, RequestState } from '../../foundation/db/schema.js';
import { effectiveState } from './requests.js';

/**
 * A company's own requests, as its account area lists them (docs/design.md section 11.4): newest first, paged by
 * id (keyset: a deep page costs what the first does, and requests made meanwhile neither repeat nor go
 * missing), filtered by state and by the beginning of `ref`, so that `ORDER-` finds every order.
 *
 * The state is the one `status` answers (docs/design.md section 3): a request still `new` or `claimed` past its
 * lifetime is `expired` before the sweep records it, both as shown and as filtered, so that the list and the
 * API never disagree about a request.
 */
export const REQUESTS_PAGE_SIZE = 50;
export const REQUEST_STATES = [
  'new',
  'claimed',
  'issued',
  'revoked',
  'expired',
  'declined',
] as const satisfies readonly RequestState[];

export interface CompanyRequestFilter {
  state?: RequestState | undefined;
  refPrefix?: string | undefined;
  before?: number | undefined;
}

export interface CompanyRequestRow {
  id: number;
  code: string;
  ref: string | null;
  state: RequestState;
  createdAt: Date;
  expiresAt: Date;
  claimedAt: Date | null;
  issuedAt: Date | null;
  revokedAt: Date | null;
  expiredAt: Date | null;
  declinedAt: Date | null;
  /** The key issued for it, as `status` names it. */
  keyRef: number | null;
}

export async function companyRequests(
  db: Database,
  companyId: number,
  filter: CompanyRequestFilter,
  now: Date,
): Promise<{ rows: CompanyRequestRow[]; older: number | null }> {
  let query = db
    .selectFrom('requests')
    .leftJoin('keys', 'keys.request_id', 'requests.id')
    .select([
      'requests.id',
      'requests.code',
      'requests.ref',
      'requests.state',
      'requests.created_at',
      'requests.expires_at',
      'requests.claimed_at',
      'requests.issued_at',
      'requests.revoked_at',
      'requests.expired_at',
      'requests.declined_at',
      'keys.id as key_id',
    ])
    .where('requests.company_id', '=', companyId)
    .orderBy('requests.id', 'desc')
    .limit(REQUESTS_PAGE_SIZE + 1);
  if (filter.state) query = query.where(inState(filter.state, now));
  if (filter.refPrefix) query = query.where('requests.ref', 'like', `${escapeLike(filter.refPrefix)}%`);
  if (filter.before) query = query.where('requests.id', '<', filter.before);
  const rows = await query.execute();
  const page = rows.slice(0, REQUESTS_PAGE_SIZE);
  return {
    rows: page.map((row) => ({
      id: row.id,
      code: row.code,
      ref: row.ref,
      state: effectiveState(row, now),
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      claimedAt: row.claimed_at,
      issuedAt: row.issued_at,
      revokedAt: row.revoked_at,
      // Until the sweep records it, a lapsed request expired at its lifetime's end.
      expiredAt: effectiveState(row, now) === 'expired' ? (row.expired_at ?? row.expires_at) : null,
      declinedAt: row.declined_at,
      keyRef: row.key_id,
    })),
    older: rows.length > REQUESTS_PAGE_SIZE ? page.at(-1)!.id : null,
  };
}

/** The condition for a request whose state, as read now (effectiveState), is `state`. */
function inState(state: RequestState, now: Date) {
  return (eb: ExpressionBuilder<DB, 'requests'>) => {
    if (state === 'new' || state === 'claimed') {
      return eb.and([eb('requests.state', '=', state), eb('requests.expires_at', '>', now)]);
    }
    if (state === 'expired') {
      return eb.or([
        eb('requests.state', '=', 'expired'),
        eb.and([eb('requests.state', 'in', ['new', 'claimed']), eb('requests.expires_at', '<=', now)]),
      ]);
    }
    return eb('requests.state', '=', state);
  };
}
