/**
 * What a database function returns, declared once in TypeScript beside the code that calls it, in the words of
 * its `.sql` file (`returns integer`, `returns table (entry_id integer, ...)`). The row type is derived from the
 * declaration, the rows are checked against it where they enter (a few `typeof`s), and a test compares every
 * declaration with the database's catalog (pg_get_function_result), so the SQL and the TypeScript cannot drift
 * apart unnoticed.
 */

/** The SQL types the functions return, as both drivers read them (int4 is a number on pg and PGlite). */
interface ReadAs {
  integer: number;
  text: string;
  'timestamp with time zone': Date;
}

export type SqlType = keyof ReadAs;

/** The columns of a `returns table (...)`, in their order. */
export type ResultColumns = Readonly<Record<string, SqlType>>;

/** A function that returns one value. */
export interface ScalarResult<T extends SqlType> {
  readonly function: string;
  readonly returns: T;
}

/** A function that returns rows. */
export interface TableResult<C extends ResultColumns> {
  readonly function: string;
  readonly table: C;
}

export type FunctionResult = ScalarResult<SqlType> | TableResult<ResultColumns>;

/** A row of a table result: any column may be null (a PL/pgSQL `return query` sets what it has). */
export type ResultRow<C extends ResultColumns> = { -readonly [K in keyof C]: ReadAs[C[K]] | null };

const IS: { [T in SqlType]: (value: unknown) => value is ReadAs[T] } = {
  integer: (value): value is number => Number.isInteger(value),
  text: (value): value is string => typeof value === 'string',
  'timestamp with time zone': (value): value is Date => value instanceof Date,
};

function mismatch(fn: string, what: string, type: SqlType, value: unknown): Error {
  return new Error(`${fn} returned ${what} as ${typeof value}, where its declaration says ${type}`);
}

/** The function's value, checked against its declaration. */
export function readValue<T extends SqlType>(result: ScalarResult<T>, value: unknown): ReadAs[T] | null {
  if (value === null || IS[result.returns](value)) return value;
  throw mismatch(result.function, 'its value', result.returns, value);
}

/** A row of the function's result, checked against its declaration: every column there, of its type. */
export function readRow<C extends ResultColumns>(result: TableResult<C>, row: Record<string, unknown>) {
  for (const [column, type] of Object.entries(result.table)) {
    const value = row[column];
    if (value !== null && !IS[type](value)) throw mismatch(result.function, column, type, value);
  }
  return row as ResultRow<C>;
}
