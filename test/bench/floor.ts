import { createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import mqtt, { type MqttClient } from 'mqtt';
import type { Database } from '../../cloud/db/database.js';
import { noDelay, startPlainBroker } from './mqtt-baseline.js';
import { ClientsProcess, type SignedEnvelope } from './mqtt-clients.js';

/**
 * The floor of `open`: what its guarantees cost with none of Gatelink's code around them, in the same run.
 * A bare Fastify route on the same database commits a row (the journal entry), signs a request with Ed25519
 * and publishes it at QoS 1 on a plain aedes; a client in its own process (bench-clients.ts, durable-echo)
 * verifies it, signs a reply, writes that durably and sends it; the route verifies
 * the reply, commits an update of the row (the outcome) and answers. No authentication, no checks, no
 * schemas, no access control on the broker: what remains is the work that no implementation can skip.
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
  const broker = await startPlainBroker();
  const spki = own.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  const echo = new ClientsProcess('durable-echo', broker.url, dir, spki);
  let client: MqttClient | undefined;
  let app: FastifyInstance | undefined;
  try {
    const ready = await echo.waitFor('ready', 30_000);
    const echoKey = createPublicKey({
      key: Buffer.from(ready.publicKey!, 'base64'),
      format: 'der',
      type: 'spki',
    });
    client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0, clientId: 'bench-floor' });
    noDelay(client);
    await client.subscribeAsync('bench/reply/+', { qos: 1 });
    const replies = new Replies(client, echoKey);
    app = Fastify({ logger: false });
    app.post('/floor', async (request, reply) => {
      const { rows } = await sql<{
        id: number;
      }>`insert into bench_floor (body) values (${JSON.stringify(request.body)}) returning id`.execute(db);
      const id = rows[0]!.id;
      const outcome = await replies.ask(id, own.privateKey);
      if (!outcome) return reply.code(502).send({ ok: 0 });
      await sql`update bench_floor set outcome = ${outcome} where id = ${id}`.execute(db);
      return { ok: 1, id };
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
  } catch (error) {
    await app?.close();
    await client?.endAsync();
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
      await client.endAsync();
      await echo.stop();
      await broker.close();
    },
  };
}

/** Signed requests waiting for their signed replies, by id. */
class Replies {
  readonly #client: MqttClient;
  readonly #echoKey: KeyObject;
  readonly #waiting = new Map<string, (reply: SignedEnvelope | null) => void>();

  constructor(client: MqttClient, echoKey: KeyObject) {
    this.#client = client;
    this.#echoKey = echoKey;
    client.on('message', (topic, payload) => {
      const id = topic.slice('bench/reply/'.length);
      this.#waiting.get(id)?.(JSON.parse(payload.toString()) as SignedEnvelope);
    });
  }

  /** Sends a signed request for `id`: 'opened' once a reply whose signature verifies arrives, else null (5 s at most). */
  ask(id: number, key: KeyObject): Promise<string | null> {
    const body = JSON.stringify({ id, action: 'open', issued_at: Date.now() });
    const request: SignedEnvelope = { body, sig: sign(null, Buffer.from(body), key).toString('base64') };
    return new Promise((resolve) => {
      const settle = (reply: SignedEnvelope | null) => {
        clearTimeout(timer);
        this.#waiting.delete(String(id));
        const valid =
          reply && verify(null, Buffer.from(reply.body), this.#echoKey, Buffer.from(reply.sig, 'base64'));
        resolve(valid ? 'opened' : null);
      };
      const timer = setTimeout(() => settle(null), 5000);
      this.#waiting.set(String(id), settle);
      this.#client.publish(`bench/request/${id}`, JSON.stringify(request), { qos: 1 });
    });
  }
}
