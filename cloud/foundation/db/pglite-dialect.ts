import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/**
 * Kysely over embedded PGlite. PGlite is one connection, so the driver hands it out to one user at a time:
 * a transaction holds it from BEGIN to COMMIT and every other query waits its turn, which gives the same
 * isolation that separate PostgreSQL connections give.
 */
export class PGliteDialect implements Dialect {
  readonly #pglite: PGlite;
  readonly #use: ConnectionUse = { total: 1, idle: 1, waiting: 0 };

  constructor(pglite: PGlite) {
    this.#pglite = pglite;
  }

  /** The one connection's use now: idle or not, and how many wait for it (docs/design.md section 8.1). */
  use(): ConnectionUse {
    return { ...this.#use };
  }

  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.#pglite, this.#use);
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}

/** A connection pool's state, as pg's Pool tells it (totalCount, idleCount, waitingCount). */
export interface ConnectionUse {
  total: number;
  idle: number;
  waiting: number;
}

class PGliteDriver implements Driver {
  readonly #connection: PGliteConnection;
  readonly #use: ConnectionUse;
  #queue: Promise<void> = Promise.resolve();
  #release: (() => void) | null = null;

  constructor(pglite: PGlite, use: ConnectionUse) {
    this.#connection = new PGliteConnection(pglite);
    this.#use = use;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.#queue;
    let release!: () => void;
    this.#queue = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#use.waiting++;
    await previous;
    this.#use.waiting--;
    this.#use.idle = 0;
    this.#release = release;
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const isolation = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await connection.executeQuery(CompiledQuery.raw(`begin${isolation}`));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = null;
    this.#use.idle = 1;
    release?.();
  }

  async destroy(): Promise<void> {}
}

class PGliteConnection implements DatabaseConnection {
  readonly #pglite: PGlite;

  constructor(pglite: PGlite) {
    this.#pglite = pglite;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.#pglite.query<R>(compiled.sql, [...compiled.parameters]);
    const affected = result.affectedRows;
    return {
      rows: result.rows,
      ...(affected !== undefined ? { numAffectedRows: BigInt(affected) } : {}),
    };
  }

  // biome-ignore lint/correctness/useYield: streaming is not offered on PGlite; kysely calls this only for .stream()
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on PGlite');
  }
}
