import { createServer } from 'node:net';
import type { FastifyError } from 'fastify';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { DatabaseOutage, isDatabaseUnreachable } from '../../cloud/foundation/db/database-outage.js';
import { toApiError } from '../../cloud/foundation/http/errors.js';
import { recordingLogger } from '../support/recording-logger.js';

/**
 * The database out of reach (cloud/README.md, "Errors"): a connection failure answers 503 `unavailable` with
 * Retry-After, and an outage is logged once when it starts, with its count once when it ends.
 */

/** What pg throws when nothing listens where the database should be. */
async function refusedConnection(): Promise<Error> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((done) => server.close(() => done()));
  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  return client.connect().then(
    () => new Error('connected to a closed port'),
    (error: Error) => error,
  );
}

describe('a database out of reach', () => {
  it("recognises pg's refused connection, a lost one, and the server's shutdown codes, and nothing else", async () => {
    expect(isDatabaseUnreachable(await refusedConnection())).toBe(true);
    expect(isDatabaseUnreachable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnreachable(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe(
      true,
    );
    expect(isDatabaseUnreachable(Object.assign(new Error('connection failure'), { code: '08006' }))).toBe(
      true,
    );
    expect(isDatabaseUnreachable(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isDatabaseUnreachable(new Error('something else'))).toBe(false);
  });

  it('answers 503 unavailable with Retry-After, never 500 internal', async () => {
    const answer = toApiError((await refusedConnection()) as FastifyError);

    expect(answer.status).toBe(503);
    expect(answer.toBody()).toEqual({
      error: 'unavailable',
      message: 'The service is briefly unavailable; retry after the delay in Retry-After.',
    });
    expect(answer.headers).toEqual({ 'retry-after': '5' });
  });

  it('logs an outage once however many failures meet it, and once with their count when it ends', async () => {
    const log = recordingLogger();
    let now = Date.parse('2026-01-01T00:00:00Z');
    const outage = new DatabaseOutage(log, { now: () => new Date(now) });
    const error = await refusedConnection();

    for (let i = 0; i < 40; i += 1) {
      expect(outage.failed(error, 'job expiry sweep')).toBe(true);
      now += 1000;
    }
    expect(outage.failed(new Error('a bug'), 'job expiry sweep')).toBe(false);
    outage.answered();
    outage.answered();

    expect(log.entries.map((entry) => [entry.level, entry.msg])).toEqual([
      [
        'error',
        'database unreachable; calls answer 503 unavailable and failures are counted until it answers again',
      ],
      ['warn', 'database reachable again after 40 failures over 40 s'],
    ]);
  });
});
