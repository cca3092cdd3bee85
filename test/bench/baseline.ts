import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Database } from '../../cloud/foundation/db/database.js';

/**
 * The baseline the API is compared with in the same run: a bare Fastify route that does one database insert
 * on the same database, and nothing else. The ratio, not the absolute figure, is what carries across machines.
 */
export async function startBaseline(db: Database): Promise<{ url: string; close(): Promise<void> }> {
  await sql`create table if not exists bench_baseline (id integer generated always as identity primary key, at timestamptz not null default now(), body text)`.execute(
    db,
  );
  const app: FastifyInstance = Fastify({ logger: false });
  app.post('/baseline', async (request) => {
    await sql`insert into bench_baseline (body) values (${JSON.stringify(request.body)})`.execute(db);
    return { ok: 1 };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}
