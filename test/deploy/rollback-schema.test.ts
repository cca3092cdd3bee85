import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATION_TABLES, migrate, pendingMigrations } from '../../cloud/foundation/db/database.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * A rollback (docs/design.md section 8.2): the previous release starts on a database the newer one migrated
 * further, and runs on the schema as it is, ready; a database whose recorded migrations are another tree's is
 * refused with one line naming the migration that differs.
 */
let database: TestDatabase;

beforeEach(async () => {
  database = await createTestDatabase();
});

afterEach(async () => {
  await database.close();
});

async function record(name: string): Promise<void> {
  const table = sql.table(MIGRATION_TABLES.migrations);
  await sql`insert into ${table} (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(
    database.db,
  );
}

describe('a release started on a database migrated by another', () => {
  it('runs on the schema a newer release expanded, with nothing pending', async () => {
    await record('9999-next-release');
    await migrate(database.db);
    expect(await pendingMigrations(database.db)).toEqual([]);
  });

  it("refuses one whose recorded migrations are another tree's, naming the one that differs", async () => {
    await record('0003-another-branch');
    await expect(migrate(database.db)).rejects.toThrow(
      "the database's migrations are not this release's (0003-another-branch differs): run the release that migrated it, or restore a backup",
    );
  });
});
