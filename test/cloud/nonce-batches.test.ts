import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../cloud/foundation/clock.js';
import { NonceLedger } from '../../cloud/rules/call-auth/nonces.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import {
  type Answer,
  type Signer,
  signatureCompany,
  startTestCloud,
  type TestCloud,
} from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';

/**
 * Nonces decided many at a time (docs/design.md section 2.1): calls arriving together share one insert, and
 * none of that loosens single use. Bursts are sent at once, to two instances on one database, so that replays
 * fall into the same batch, into batches committing side by side, and into another instance's batch.
 */

const keyFiles = new KeyFileServer();
let database: TestDatabase;
let first: TestCloud;
let second: TestCloud;
let signer: Signer;
let code: string;

beforeAll(async () => {
  await keyFiles.start();
  database = await createTestDatabase();
  const env = { GATELINK_DEV_KEYFILE_URL: keyFiles.template };
  first = await startTestCloud({ database, env });
  second = await startTestCloud({ database, env });
  ({ signer } = await signatureCompany(first, keyFiles, 'burst.example'));
  const created = await first.signedCall('request', { ref: 'burst' }, signer);
  code = created.body.code as string;
});

afterAll(async () => {
  await second?.stop();
  await first?.stop();
  await database?.close();
  await keyFiles.stop();
});

const freshNonce = () => randomBytes(16).toString('hex');

function outcomes(answers: Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of answers) {
    const key = answer.status === 200 ? '200' : `${answer.status} ${String(answer.body.error)}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

describe('nonces decided in batches', () => {
  it('[attack:auth.nonce-replay] one signed call sent 24 times at once, to two instances, is answered once', async () => {
    const nonce = freshNonce();
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        (i % 2 === 0 ? first : second).signedCall('status', { code }, { ...signer, nonce }),
      ),
    );
    expect(outcomes(answers)).toEqual({ '200': 1, '401 nonce_reused': 23 });
  });

  it('[attack:auth.nonce-replay] a replayed request sent 12 times at once makes one request', async () => {
    const nonce = freshNonce();
    const ref = `replayed-${nonce.slice(0, 8)}`;
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 === 0 ? first : second).signedCall('request', { ref }, { ...signer, nonce }),
      ),
    );
    expect(outcomes(answers)).toEqual({ '200': 1, '401 nonce_reused': 11 });
    const made = await database.db
      .selectFrom('requests')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('ref', '=', ref)
      .executeTakeFirstOrThrow();
    expect(Number(made.n)).toBe(1);
  });

  it('sixty different calls at once are all answered, each nonce kept once', async () => {
    const nonces = Array.from({ length: 60 }, freshNonce);
    const answers = await Promise.all(
      nonces.map((nonce, i) =>
        (i % 2 === 0 ? first : second).signedCall('status', { code }, { ...signer, nonce }),
      ),
    );
    expect(outcomes(answers)).toEqual({ '200': 60 });
    const kept = await database.db
      .selectFrom('nonces')
      .select('nonce')
      .where('nonce', 'in', nonces)
      .execute();
    expect(kept).toHaveLength(60);
  });

  it('[attack:auth.nonce-replay] a replayed status is refused as a replay even where the read fails', async () => {
    const nonce = freshNonce();
    expect((await first.signedCall('status', { code }, { ...signer, nonce })).status).toBe(200);
    const replay = await second.signedCall('status', { code: 'NOSUCHCODE00' }, { ...signer, nonce });
    expect({ status: replay.status, error: replay.body.error }).toEqual({
      status: 401,
      error: 'nonce_reused',
    });
  });

  it('[attack:auth.nonce-burn] forged calls in a burst burn none of the nonces they carry', async () => {
    const nonces = Array.from({ length: 10 }, freshNonce);
    const forger = { ...signer, key: SigningKey.generate() };
    const forged = await Promise.all(
      nonces.map((nonce) => first.signedCall('status', { code }, { ...forger, nonce })),
    );
    expect(outcomes(forged)).toEqual({ '401 bad_signature': 10 });
    const genuine = await Promise.all(
      nonces.map((nonce) => second.signedCall('status', { code }, { ...signer, nonce })),
    );
    expect(outcomes(genuine)).toEqual({ '200': 10 });
  });
});

describe('the nonce ledger', () => {
  it('tells every waiting call when the database refuses the batch, and takes later ones again', async () => {
    const scratch = await createTestDatabase();
    const ledger = new NonceLedger(scratch.db, systemClock);
    const { id } = await scratch.db
      .insertInto('companies')
      .values({ name: 'Ledger' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await scratch.db.schema.alterTable('nonces').renameTo('nonces_away').execute();
    const refused = await Promise.allSettled([
      ledger.consume(id, freshNonce()),
      ledger.consume(id, freshNonce()),
    ]);
    expect(refused.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    await scratch.db.schema.alterTable('nonces_away').renameTo('nonces').execute();
    const nonce = freshNonce();
    expect(await Promise.all([ledger.consume(id, nonce), ledger.consume(id, nonce.toUpperCase())])).toEqual([
      true,
      false,
    ]);
    await scratch.close();
  });
});
