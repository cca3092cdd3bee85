import type { CloudContext } from '../../foundation/context.js';
import type { Database } from '../../foundation/db/database.js';

/** What a change to a company stands on beyond the ground: whatever keeps a copy of companies forgets one. */
export interface CompanyChangeContext extends CloudContext {
  readonly companyCache: { forget(companyId: number): void };
}

/** The companies each open change's transaction changed, to be forgotten after its commit. */
const changing = new WeakMap<Database, Set<number>>();

/**
 * Every change to what a company's calls are checked against (its status, domain, pinned key and its
 * confirmation, secrets, logo) is made through `changeCompany`, which alone tells the company cache
 * (cloud/rules/call-auth/company-cache.ts; docs/design.md section 2.2): the change runs in one transaction, and once
 * it committed this instance forgets the company, so its next call reads the company afresh; other instances
 * within the cache's lifetime, as before. Forgetting after the commit, not before, leaves no moment in which a
 * call could read the old row and be remembered with it.
 *
 * A change inside another change's transaction joins it and is forgotten with it. A change inside a transaction
 * not opened here is refused: nothing would forget it after that transaction's commit.
 */
export async function changeCompany<T, Context extends CompanyChangeContext>(
  ctx: Context,
  companyId: number,
  change: (inside: Context) => Promise<T>,
): Promise<T> {
  if (ctx.db.isTransaction) {
    const joined = changing.get(ctx.db);
    if (!joined) {
      throw new Error('A change to a company runs in its own transaction, or inside another changeCompany');
    }
    joined.add(companyId);
    return change(ctx);
  }
  const changed = new Set([companyId]);
  const result = await ctx.db.transaction().execute((trx) => {
    changing.set(trx, changed);
    return change({ ...ctx, db: trx });
  });
  for (const id of changed) ctx.companyCache.forget(id);
  return result;
}
