import { sql } from 'kysely';
import type { CloudContext } from '../../foundation/context.js';
import { escapeLike } from '../../foundation/db/like-pattern.js';
import type { CompanyStatus } from '../../foundation/db/schema.js';
import type { Company } from './companies.js';
import { normalizeDomain } from './domains.js';

/**
 * The console's list of companies (docs/design.md section 11.5): those waiting for approval first, filtered by
 * state, and found by what an operator has at hand when a company calls: a part of its name, its domain as
 * written either way (Unicode or punycode), its id, or an e-mail address, its contact's or a member's.
 */
export const SEARCH_MAX_LENGTH = 200;

/** More than an operator reads on one page; the waiting ones come first, so none is hidden behind the rest. */
const LIST_LIMIT = 500;

export async function findCompanies(
  ctx: Pick<CloudContext, 'db'>,
  filter: { status: CompanyStatus | 'all'; text: string },
): Promise<Company[]> {
  let query = ctx.db
    .selectFrom('companies')
    .selectAll()
    // A company's sandbox is found through its company (docs/design.md section 11.9).
    .where('sandbox_of', 'is', null)
    .orderBy(sql`case when status = 'pending' then 0 else 1 end`)
    .orderBy('id')
    .limit(LIST_LIMIT);
  if (filter.status !== 'all') query = query.where('status', '=', filter.status);
  const text = filter.text.trim().slice(0, SEARCH_MAX_LENGTH);
  if (text === '') return query.execute();
  const contains = `%${escapeLike(text)}%`;
  const domain = `%${escapeLike(normalizeDomain(text) ?? text.toLowerCase())}%`;
  return query
    .where((eb) =>
      eb.or([
        eb('name', 'ilike', contains),
        eb('domain', 'like', domain),
        eb('contact_email', 'ilike', contains),
        eb.exists(
          eb
            .selectFrom('company_members')
            .leftJoin('customers', 'customers.id', 'company_members.customer_id')
            .select('company_members.id')
            .whereRef('company_members.company_id', '=', 'companies.id')
            .where((member) =>
              member.or([
                member('company_members.email', 'ilike', contains),
                member('customers.email', 'ilike', contains),
              ]),
            ),
        ),
        ...(/^\d{1,9}$/.test(text) ? [eb('id', '=', Number(text))] : []),
      ]),
    )
    .execute();
}
