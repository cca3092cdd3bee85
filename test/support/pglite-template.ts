import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../cloud/foundation/db/database.js';
import { applyFunctions } from '../../cloud/foundation/db/functions.js';
import { PGliteDialect } from '../../cloud/foundation/db/pglite-dialect.js';
import type { DB } from '../../cloud/foundation/db/schema.js';

/**
 * Vitest's global setup on PGlite: one database migrated as `openDatabase` leaves it (the migrations, then the
 * functions), dumped to a file that every suite's database starts from (./database.ts). Migrating afresh took 3
 * to 6 s a database on PGlite, against about 1 s to load the dump, and a run makes a few hundred. Each database
 * is still opened with `openDatabase`, whose migrations then find nothing to do, so what a suite gets is what a
 * new cloud gets. Nothing on PostgreSQL, whose databases migrate in well under a second.
 */
declare module 'vitest' {
  export interface ProvidedContext {
    /** The dump's file; empty when there is none (PostgreSQL, or a run without this setup). */
    pgliteTemplate: string;
  }
}

export default async function pgliteTemplate(project: TestProject): Promise<(() => Promise<void>) | void> {
  if (process.env.DATABASE_URL) {
    project.provide('pgliteTemplate', '');
    return;
  }
  const folder = await mkdtemp(join(tmpdir(), 'gatelink-pglite-template-'));
  const pglite = await PGlite.create();
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite) });
  await migrate(db);
  await applyFunctions(db);
  const file = join(folder, 'migrated.tar');
  await writeFile(file, Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer()));
  await db.destroy();
  await pglite.close();
  project.provide('pgliteTemplate', file);
  return () => rm(folder, { recursive: true, force: true });
}
