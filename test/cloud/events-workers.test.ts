import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../cloud/foundation/db/database.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { callbackCompany, enqueuePings } from '../support/event-company.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Two cloud instances delivering from one PostgreSQL under load (docs/design.md section 6): each company's events
 * are taken by one worker at a time (`for no key update skip locked`, then a lease), so no event is ever received
 * twice at the same time, and each company's arrive in the order they were written. PostgreSQL only: the
 * embedded database allows one process.
 */
const COMPANIES = 12;
const PER_COMPANY = 60;
const skip = process.env.DATABASE_URL ? null : 'needs PostgreSQL (DATABASE_URL): PGlite allows one process';

describe.skipIf(skip !== null)(
  `two workers on one PostgreSQL${skip ? ` (${skip})` : ''}`,
  { timeout: 120_000 },
  () => {
    let database: TestDatabase;
    let second: DatabaseHandle | undefined;
    const clouds: TestCloud[] = [];
    let receiver: WebhookReceiver;
    const keyDir = mkdtempSync(join(tmpdir(), 'gatelink-key-'));

    beforeAll(async () => {
      database = await createTestDatabase();
      const delivery = { allowPrivateAddresses: true, timeoutMs: 2000, concurrency: 4, batchSize: 5 };
      // The instances share the service key, as instances on one database must (cloud/README.md).
      const env = { SIGNING_KEY_FILE: join(keyDir, 'signing-key.pem') };
      clouds.push(await startTestCloud({ database, env, eventDelivery: delivery }));
      second = await openDatabase({ url: database.url! });
      clouds.push(await startTestCloud({ database: second, env, eventDelivery: delivery }));
      receiver = new WebhookReceiver();
      const published = await clouds[0]!.app.inject({ method: 'GET', url: '/.well-known/service.json' });
      await receiver.start((JSON.parse(published.body) as { key: string }).key);
      // A receiver that takes its time now and then, so that deliveries overlap the other instance's claims.
      let n = 0;
      receiver.answer = () => ({ status: 200, delayMs: n++ % 7 === 0 ? 15 : 0 });
    });

    afterAll(async () => {
      for (const cloud of clouds) await cloud.stop();
      await second?.close();
      await receiver?.stop();
      await database?.close();
      rmSync(keyDir, { recursive: true, force: true });
    });

    it('never sends one event twice at once, and keeps each company in order', async () => {
      const ctx = clouds[0]!.ctx;
      const companies: number[] = [];
      for (let i = 0; i < COMPANIES; i++)
        companies.push(await callbackCompany(ctx, `Load ${i}`, receiver.url));
      // Events keep coming, from both instances, while both deliver.
      await Promise.all(
        companies.map((companyId, i) => enqueuePings(clouds[i % 2]!.ctx, companyId, PER_COMPANY)),
      );
      const total = COMPANIES * PER_COMPANY;
      await waitFor(() => receiver.events().length === total, 'every event', 90_000);

      expect(receiver.concurrentDuplicates).toEqual([]);
      expect(receiver.received.every((item) => item.verified)).toBe(true);
      const rows = await ctx.db
        .selectFrom('events')
        .select(['id', 'company_id', 'delivered_at'])
        .orderBy('seq')
        .execute();
      expect(rows).toHaveLength(total);
      const firstArrival = new Map(receiver.events().map((event, index) => [event.id, index]));
      for (const companyId of companies) {
        const order = rows
          .filter((row) => row.company_id === companyId)
          .map((row) => firstArrival.get(row.id)!);
        expect(order).toEqual([...order].sort((a, b) => a - b));
      }
      const senders = new Set(receiver.received.map((item) => item.headers['user-agent']));
      expect(senders).toEqual(new Set(['Gatelink-Webhooks/1']));
    });
  },
);
