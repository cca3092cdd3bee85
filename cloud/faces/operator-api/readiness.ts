import { sql } from 'kysely';
import { type Database, pendingMigrations } from '../../foundation/db/database.js';

/** What `/readyz` can name as not ready (docs/design.md section 8.1). */
export type ReadinessPart = 'database' | 'migrations' | 'broker';

export interface ReadinessSources {
  db: Database;
  broker: { linked(): boolean };
  /** How long the database may take to answer before it counts as not ready. */
  timeoutMs: number;
}

/**
 * The parts that are not ready, in that order; none when the instance can serve. The database must answer
 * within the deadline; then every migration of this tree must have run on it (a database restored from an older
 * backup, or migrated by no one yet, has not); and the broker must link controllers to this instance.
 */
export async function notReady(sources: ReadinessSources): Promise<ReadinessPart[]> {
  const parts: ReadinessPart[] = [];
  const database = await withinTime(sources.timeoutMs, async () => {
    await sql`select 1`.execute(sources.db);
    return (await pendingMigrations(sources.db)).length === 0;
  });
  if (database === 'failed') parts.push('database');
  else if (!database) parts.push('migrations');
  if (!sources.broker.linked()) parts.push('broker');
  return parts;
}

async function withinTime<T>(timeoutMs: number, work: () => Promise<T>): Promise<T | 'failed'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'failed'>((resolve) => {
    timer = setTimeout(() => resolve('failed'), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([work(), late]);
  } catch {
    return 'failed';
  } finally {
    clearTimeout(timer);
  }
}
