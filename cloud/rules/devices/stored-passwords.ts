import { sql } from 'kysely';
import type { Database } from '../../foundation/db/database.js';
import { StatementBatches } from '../../foundation/db/statement-batches.js';

/**
 * The stored broker-password hashes of devices logging in, read many at a time (docs/design.md section 7.3):
 * a fleet reconnecting after a broker restart logs in thousands at once, and one query for all of them that
 * arrive together keeps the database's round trips from setting the pace.
 */
export class StoredPasswords {
  readonly #db: Database;
  readonly #batches = new StatementBatches<string, string | null>((ids) => this.#read(ids), {
    maxRows: 500,
    maxInFlight: 2,
  });

  constructor(db: Database) {
    this.#db = db;
  }

  /** The device's password hash, or null when there is no such device or it has none. */
  hashOf(deviceId: string): Promise<string | null> {
    return this.#batches.submit(deviceId);
  }

  async #read(ids: string[]): Promise<(string | null)[]> {
    const { rows } = await sql<{ id: string; mqtt_password_hash: string | null }>`
      select id, mqtt_password_hash from devices where id = any(${ids}::text[])`.execute(this.#db);
    const hashes = new Map(rows.map((row) => [row.id, row.mqtt_password_hash]));
    return ids.map((id) => hashes.get(id) ?? null);
  }
}
