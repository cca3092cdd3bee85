import { createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { PublishPacket } from 'aedes';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Database } from '../../cloud/foundation/db/database.js';
import { type PlainBroker, startPlainBroker } from './mqtt-baseline.js';
import { ClientsProcess, type SignedEnvelope } from './mqtt-clients.js';

/**
 * The floor of `open`: what its guarantees cost with none of Gatelink's code around them, in the same run.
 * A bare Fastify route on the same database commits a row (the journal entry), signs a request with Ed25519
 * and publishes it at QoS 1 through a plain aedes in the same process, as the embedded broker does; a client
 * in its own process (bench-clients.ts, durable-echo) verifies it, signs a reply, writes that durably and
 * sends it. The broker's publish hook verifies the reply, lets the route answer, and commits an update of the
 * row (the outcome) before the reply is accepted, so that the client keeps it until then. No authentication,
 * no checks, no schemas, no access control on the broker: what remains is the work that no implementation can
 * skip.
 */
export interface Floor {
  url: string;
  close(): Promise<void>;
}

export async function startFloor(db: Database, dir: string): Promise<Floor> {
  await sql`create table if not exists bench_floor (id integer generated always as identity primary key, at timestamptz not null default now(), body text, outcome text)`.execute(
    db,
  );
  const own = generateKeyPairSync('ed25519');
  const replies = new Replies(db);
  const broker = await startPlainBroker({
    authorizePublish: (_client, packet, done) => {
      replies.take(packet).then(
        () => done(null),
        (error: Error) => done(error),
      );
    },
  });
  const spki = own.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  const echo = new ClientsProcess('durable-echo', broker.url, dir, spki);
  let app: FastifyInstance | undefined;
  try {
    const ready = await echo.waitFor('ready', 30_000);
    replies.echoKey = createPublicKey({
      key: Buffer.from(ready.publicKey!, 'base64'),
      format: 'der',
      type: 'spki',
    });
    app = Fastify({ logger: false });
    app.post('/floor', async (request, reply) => {
      const { rows } = await sql<{
        id: number;
      }>`insert into bench_floor (body) values (${JSON.stringify(request.body)}) returning id`.execute(db);
      const id = rows[0]!.id;
      const outcome = await replies.ask(broker, id, own.privateKey);
      if (!outcome) return reply.code(502).send({ ok: 0 });
      return { ok: 1, id };
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
  } catch (error) {
    await app?.close();
    await echo.stop();
    await broker.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      await app.close();
      await echo.stop();
      await broker.close();
    },
  };
}

/** Signed requests waiting for their signed replies, by id. */
class Replies {
  readonly #db: Database;
  readonly #waiting = new Map<string, (reply: 'opened' | null) => void>();
  echoKey: KeyObject | null = null;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Sends a signed request for `id`: 'opened' once a reply whose signature verifies arrives, else null (5 s at most). */
  ask(broker: PlainBroker, id: number, key: KeyObject): Promise<'opened' | null> {
    const body = JSON.stringify({ id, action: 'open', issued_at: Date.now() });
    const request: SignedEnvelope = { body, sig: sign(null, Buffer.from(body), key).toString('base64') };
    return new Promise((resolve) => {
      const settle = (outcome: 'opened' | null) => {
        clearTimeout(timer);
        this.#waiting.delete(String(id));
        resolve(outcome);
      };
      const timer = setTimeout(() => settle(null), 5000);
      this.#waiting.set(String(id), settle);
      const payload = Buffer.from(JSON.stringify(request));
      broker.aedes.publish(
        { cmd: 'publish', topic: `bench/request/${id}`, payload, qos: 1, retain: false, dup: false },
        () => undefined,
      );
    });
  }

  /** A publish reaching the broker: a verified reply answers its request, and is accepted once recorded. */
  async take(packet: PublishPacket): Promise<void> {
    if (!packet.topic.startsWith('bench/reply/')) return;
    const id = packet.topic.slice('bench/reply/'.length);
    const reply = JSON.parse(packet.payload.toString()) as SignedEnvelope;
    const valid = verify(null, Buffer.from(reply.body), this.echoKey!, Buffer.from(reply.sig, 'base64'));
    if (!valid) return;
    this.#waiting.get(id)?.('opened');
    // As the cloud does: the answer leaves before the write starts.
    await nextTurn();
    await sql`update bench_floor set outcome = 'opened' where id = ${Number(id)}`.execute(this.#db);
  }
}
