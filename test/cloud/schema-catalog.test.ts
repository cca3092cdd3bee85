import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATION_TABLES } from '../../cloud/foundation/db/database.js';
import { TABLE_COLUMNS } from '../../cloud/foundation/db/schema-columns.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The migrations make the tables; cloud/foundation/db/schema.ts types them by hand for kysely. The compiler holds
 * schema.ts to its description as data (cloud/foundation/db/schema-columns.ts), and this test holds that
 * description to a migrated database's catalog, on PGlite and on PostgreSQL: every table, every column, its type
 * and whether it may be null, so a column added, dropped or changed on one side only is caught.
 */
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.close();
});

interface CatalogColumn {
  table_name: string;
  column_name: string;
  data_type: string;
  is_nullable: 'YES' | 'NO';
}

/** The public schema's tables in the words of schema-columns.ts, the migrator's own left out. */
async function catalogTables(): Promise<Record<string, Record<string, string>>> {
  const { rows } = await sql<CatalogColumn>`
    select table_name, column_name, data_type, is_nullable
      from information_schema.columns
     where table_schema = 'public'
     order by table_name, ordinal_position
  `.execute(database.db);
  const tables: Record<string, Record<string, string>> = {};
  for (const row of rows) {
    if (Object.values<string>(MIGRATION_TABLES).includes(row.table_name)) continue;
    tables[row.table_name] ??= {};
    tables[row.table_name]![row.column_name] =
      row.is_nullable === 'YES' ? `${row.data_type} | null` : row.data_type;
  }
  return tables;
}

describe('schema.ts and the migrations', () => {
  it('name the same tables', async () => {
    expect(Object.keys(await catalogTables()).sort()).toEqual(Object.keys(TABLE_COLUMNS).sort());
  });

  for (const [table, columns] of Object.entries(TABLE_COLUMNS)) {
    it(`${table}: the same columns, of the same types, null where the database allows it`, async () => {
      expect((await catalogTables())[table]).toEqual(columns);
    });
  }
});
