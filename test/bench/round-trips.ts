import {
  AliasNode,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  TableNode,
  type UnknownRow,
} from 'kysely';
import type { DatabaseHandle } from '../../cloud/foundation/db/database.js';

/**
 * The database's part of an operation, statement by statement (issue 33: the database round trips and their
 * time): a Kysely plugin on the handle a benchmark gives the cloud, which times each statement from its
 * compilation to its result. On PostgreSQL that is the round trip and the server's work, on PGlite the work on
 * the one thread; either way it includes a statement's wait for the connection. Statements are named by what
 * they do: the operation and its table, or a raw statement's first words (most of an opening is calls to its
 * SQL functions, which the name shows).
 */
export class RoundTrips implements KyselyPlugin {
  readonly #started = new Map<object, { name: string; at: number }>();
  readonly #totals = new Map<string, { count: number; ms: number }>();
  #on = false;

  /** The database handle whose statements are timed while `measuring` runs. */
  timed(handle: DatabaseHandle): DatabaseHandle {
    return { ...handle, db: handle.db.withPlugin(this) };
  }

  /** Times the statements `work` makes; resolves with its result and the totals by statement. */
  async measuring<T>(
    work: () => Promise<T>,
  ): Promise<{ result: T; statements: Map<string, { count: number; ms: number }> }> {
    this.#totals.clear();
    this.#on = true;
    try {
      const result = await work();
      return { result, statements: new Map(this.#totals) };
    } finally {
      this.#on = false;
    }
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.#on) this.#started.set(args.queryId, { name: statementName(args.node), at: performance.now() });
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const started = this.#started.get(args.queryId);
    if (started) {
      this.#started.delete(args.queryId);
      const total = this.#totals.get(started.name) ?? { count: 0, ms: 0 };
      total.count++;
      total.ms += performance.now() - started.at;
      this.#totals.set(started.name, total);
    }
    return args.result;
  }
}

function statementName(node: RootOperationNode): string {
  if (node.kind === 'RawNode') {
    const text = node.sqlFragments.join('?').replace(/\s+/g, ' ').trim();
    const call = /\b([a-z_]+)\(/.exec(text.replace(/^(select|with)\b.*?\bfrom\b/i, ''));
    const words = text.split(' ').slice(0, 3).join(' ');
    if (call && /^select/i.test(text)) return `select ${call[1]}()`;
    const from = /^with\b.*?\b(?:from|update|into)\s+([a-z_]+)/i.exec(text);
    return from ? `with ... ${from[1]}` : words;
  }
  const table = tableOf(node);
  const verb = node.kind.replace(/QueryNode$/, '').toLowerCase();
  return table ? `${verb} ${table}` : verb;
}

function tableOf(node: RootOperationNode): string | undefined {
  switch (node.kind) {
    case 'SelectQueryNode':
      return tableName(node.from?.froms[0]);
    case 'InsertQueryNode':
      return tableName(node.into);
    case 'UpdateQueryNode':
      return tableName(node.table);
    case 'DeleteQueryNode':
      return tableName(node.from.froms[0]);
    default:
      return undefined;
  }
}

function tableName(node: OperationNode | undefined): string | undefined {
  if (!node) return undefined;
  if (TableNode.is(node)) return node.table.identifier.name;
  if (AliasNode.is(node)) return tableName(node.node);
  return undefined;
}

/** One line: statements per operation and their time, the costliest first. */
export function formatRoundTrips(
  name: string,
  statements: Map<string, { count: number; ms: number }>,
  operations: number,
): string {
  const all = [...statements.values()];
  const count = all.reduce((sum, each) => sum + each.count, 0) / operations;
  const ms = all.reduce((sum, each) => sum + each.ms, 0) / operations;
  const parts = [...statements]
    .sort((a, b) => b[1].ms - a[1].ms)
    .slice(0, 8)
    .map(
      ([statement, each]) =>
        `${statement} ${(each.count / operations).toFixed(2)}x ${(each.ms / operations).toFixed(3)}`,
    );
  return `${name}: ${count.toFixed(1)} statements, ${ms.toFixed(3)} ms per operation (${parts.join('; ')})`;
}
