import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../cloud/foundation/db/database.js';
import type { FunctionResult } from '../../cloud/foundation/db/function-result.js';
import { applyFunctions, functionDefinitions } from '../../cloud/foundation/db/functions.js';
import { accessKeyLapseResult } from '../../cloud/rules/access-keys/key-lifetime.js';
import { grantShapeRefusalResult } from '../../cloud/rules/grant-shapes/grant-shape-refusal.js';
import { keyOpeningsUsedResult } from '../../cloud/rules/grant-shapes/openings-used.js';
import { completeEntryResult, completeEntrySignedResult } from '../../cloud/rules/journal/journal.js';
import { openAttemptResult } from '../../cloud/rules/opening/open.js';
import { applyPositionReportsResult } from '../../cloud/rules/positions/position-reports.js';
import { createMigratedOnlyDatabase, createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The database functions are defined in `.sql` files beside their callers and applied after the migrations on
 * every start (cloud/foundation/db/functions.ts). What each returns is declared once in TypeScript beside its caller
 * (cloud/foundation/db/function-result.ts); these tests hold the two to each other through the database's own catalog.
 */

/** Every result declaration in the cloud: a new database function adds its own here. */
const DECLARED: FunctionResult[] = [
  accessKeyLapseResult,
  grantShapeRefusalResult,
  openAttemptResult,
  completeEntryResult,
  completeEntrySignedResult,
  applyPositionReportsResult,
  keyOpeningsUsedResult,
];

/** The names the function files define, read from their text. */
const DEFINED = functionDefinitions.map((text) => /create or replace function (\w+)\(/.exec(text)?.[1]);

interface CatalogFunction {
  name: string;
  args: string;
  result: string;
  definition: string;
}

/** The functions of the public schema as the catalog holds them, overloads included, in a stable order. */
async function catalogFunctions<T>(db: Kysely<T>): Promise<CatalogFunction[]> {
  const { rows } = await sql<CatalogFunction>`
    select p.proname as name, pg_get_function_identity_arguments(p.oid) as args,
           pg_get_function_result(p.oid) as result, pg_get_functiondef(p.oid) as definition
      from pg_proc p
     where p.pronamespace = 'public'::regnamespace
     order by 1, 2
  `.execute(db);
  return rows;
}

/** A declaration in the words pg_get_function_result uses: `integer`, `TABLE(entry_id integer, ...)`. */
function asCatalogResult(declared: FunctionResult): string {
  if ('returns' in declared) return declared.returns;
  const columns = Object.entries(declared.table).map(([column, type]) => `${column} ${type}`);
  return `TABLE(${columns.join(', ')})`;
}

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.close();
});

describe('what each function returns', () => {
  it('each file defines one function, and the cloud has no other', async () => {
    expect(DEFINED).toEqual([
      'access_key_lapse',
      'open_event_data',
      'event_time',
      'seconds_between',
      'event_to_callback',
      'events_to_endpoints',
      'previous_release_callback',
      'previous_release_secret',
      'key_openings_used',
      'grant_shape_refusal',
      'open_attempt',
      'complete_entry',
      'complete_entry_signed',
      'apply_position_reports',
      'apply_position_report',
      'events_notify',
      'push_wake',
    ]);
    const names = (await catalogFunctions(database.db)).map((fn) => fn.name);
    expect(names.sort()).toEqual([...DEFINED].sort());
  });

  for (const declared of DECLARED) {
    it(`${declared.function}: the TypeScript declaration matches the function's result in the catalog`, async () => {
      const found = (await catalogFunctions(database.db)).filter((fn) => fn.name === declared.function);
      expect(found).toHaveLength(1);
      expect(found[0]!.result).toBe(asCatalogResult(declared));
    });
  }
});

describe('applying the functions', () => {
  it('twice in a row changes nothing', async () => {
    const before = await catalogFunctions(database.db);
    await applyFunctions(database.db);
    await applyFunctions(database.db);
    expect(await catalogFunctions(database.db)).toEqual(before);
  });

  it('is cheap: a few milliseconds on a database already up to date', async () => {
    const started = performance.now();
    await applyFunctions(database.db);
    // Generous for a loaded machine; it takes single-digit milliseconds on an idle one.
    expect(performance.now() - started).toBeLessThan(500);
  });

  it.skipIf(!process.env.DATABASE_URL)(
    'from several instances at once against one PostgreSQL: none fails on another',
    async () => {
      const instances = await Promise.all(
        Array.from({ length: 4 }, () => openDatabase({ url: database.url! })),
      );
      try {
        for (let round = 0; round < 5; round++) {
          await Promise.all(instances.map((instance) => applyFunctions(instance.db)));
        }
      } finally {
        await Promise.all(instances.map((instance) => instance.close()));
      }
      expect((await catalogFunctions(database.db)).map((fn) => fn.name).sort()).toEqual([...DEFINED].sort());
    },
  );

  it.skipIf(!process.env.DATABASE_URL)(
    "several instances of a new release starting together on an earlier release's PostgreSQL database all open it",
    async () => {
      const earlier = await createMigratedOnlyDatabase();
      try {
        const instances = await Promise.all(Array.from({ length: 4 }, () => openDatabase(earlier.location)));
        expect(await catalogFunctions(instances[0]!.db)).toEqual(await catalogFunctions(database.db));
        await Promise.all(instances.map((instance) => instance.close()));
      } finally {
        await earlier.remove();
      }
    },
  );
});

describe('a database migrated by an earlier release (migrations 0001 to 0004 alone)', () => {
  it('holds, once opened, exactly the functions of a new database, in place of those the migrations made', async () => {
    let migrated: CatalogFunction[] = [];
    const earlier = await createMigratedOnlyDatabase({
      inspect: async (db) => {
        migrated = await catalogFunctions(db);
      },
    });
    let opened: CatalogFunction[];
    try {
      const handle = await openDatabase(earlier.location);
      try {
        opened = await catalogFunctions(handle.db);
      } finally {
        await handle.close();
      }
    } finally {
      await earlier.remove();
    }
    const fresh = await catalogFunctions(database.db);
    // The migrations made open_attempt and complete_entry, building the event payload themselves, and the
    // trigger functions that wake the event and push deliveries and give events their places at the endpoints
    // and carry a previous release's writes over (migrations 0007, 0022 and 0036 make the triggers, which need
    // them); migration 0019 drops open_attempt again, since its result gained a column.
    expect(migrated.map((fn) => fn.name)).toEqual([
      'complete_entry',
      'events_notify',
      'events_to_endpoints',
      'previous_release_callback',
      'previous_release_secret',
      'push_wake',
    ]);
    for (const fn of migrated) expect(fn.definition).not.toContain('open_event_data');
    expect(opened).toEqual(fresh);
  });
});
