import { execFile } from 'node:child_process';
import pg from 'pg';
import { BackupError } from './manifest.js';

/**
 * pg_dump and pg_restore, PostgreSQL's own tools, run against DATABASE_URL. The password goes in the
 * environment (PGPASSWORD), never on the command line, where any user of the machine could read it.
 */
function connection(databaseUrl: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  return { dbname: url.toString(), env: { ...process.env, ...(password ? { PGPASSWORD: password } : {}) } };
}

function runTool(tool: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((done, fail) => {
    execFile(tool, args, { env, maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      if (!error) return done();
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return fail(new BackupError(`${tool} is not installed: apt-get install postgresql-client`));
      }
      fail(
        new BackupError(`${tool} failed: ${stderr.trim().split('\n').slice(-3).join(' ') || error.message}`),
      );
    });
  });
}

/** One consistent snapshot of the whole database, in pg_dump's custom format. */
export async function dumpDatabase(databaseUrl: string, file: string): Promise<void> {
  const { dbname, env } = connection(databaseUrl);
  await runTool(
    'pg_dump',
    ['--format=custom', '--no-owner', '--no-privileges', `--file=${file}`, dbname],
    env,
  );
}

/** The dump into the database, all or nothing: one transaction, stopped at the first error. */
export async function restoreDatabase(databaseUrl: string, file: string): Promise<void> {
  const { dbname, env } = connection(databaseUrl);
  const args = [
    '--no-owner',
    '--no-privileges',
    '--exit-on-error',
    '--single-transaction',
    `--dbname=${dbname}`,
  ];
  await runTool('pg_restore', [...args, file], env);
}

/** The tables of the database outside PostgreSQL's own schemas: none in a database made for a restore. */
export async function tablesIn(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
  } catch (error) {
    throw new BackupError(
      `cannot reach the database of DATABASE_URL: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  try {
    const result = await client.query<{ count: string }>(
      "select count(*) from pg_tables where schemaname not in ('pg_catalog', 'information_schema')",
    );
    return Number(result.rows[0]?.count ?? 0);
  } finally {
    await client.end();
  }
}

/** The newest migration the database recorded (docs/design.md section 8), or null before the first. */
export async function latestMigration(databaseUrl: string, table: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const exists = await client.query<{ found: string | null }>('select to_regclass($1) as found', [table]);
    if (!exists.rows[0]?.found) return null;
    const result = await client.query<{ name: string }>(
      `select name from ${table} order by name desc limit 1`,
    );
    return result.rows[0]?.name ?? null;
  } finally {
    await client.end();
  }
}
