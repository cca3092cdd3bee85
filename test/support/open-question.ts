import type { QuestionKind } from '../../cloud/foundation/db/schema.js';
import type { TestCloud } from './cloud.js';
import { waitFor } from './wait-for.js';

/**
 * The journal entry of the newest question of `kind` still open (on `deviceId`'s barrier when given), once one
 * is asked: an `open` asks it a moment after the call leaves the test.
 */
export async function openQuestion(
  cloud: TestCloud,
  where: { kind: QuestionKind; deviceId?: string },
  what: string,
): Promise<number> {
  let entry = 0;
  await waitFor(async () => {
    let query = cloud.ctx.db
      .selectFrom('opening_questions')
      .select('journal_id')
      .where('kind', '=', where.kind)
      .where('answer', 'is', null);
    if (where.deviceId !== undefined) query = query.where('device_id', '=', where.deviceId);
    const row = await query.orderBy('journal_id', 'desc').executeTakeFirst();
    entry = row?.journal_id ?? 0;
    return entry > 0;
  }, what);
  return entry;
}
