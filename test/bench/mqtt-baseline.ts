import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { Aedes, type AedesOptions } from 'aedes';
import mqtt, { type MqttClient } from 'mqtt';
import { type Figures, figuresOf } from './measure.js';
import { ClientsProcess } from './mqtt-clients.js';

/**
 * A plain aedes on a free loopback port, without authentication or any application code, and no listeners of
 * its own: the broker the cloud embeds, with nothing of the cloud around it.
 */
export interface PlainBroker {
  url: string;
  aedes: Aedes;
  close(): Promise<void>;
}

/** `options`: for the floor, the hook through which it takes replies, as the cloud does. */
export async function startPlainBroker(options: AedesOptions = {}): Promise<PlainBroker> {
  const aedes = await Aedes.createBroker(options);
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    // As the embedded broker does: without it, Nagle's algorithm and delayed ACKs add 40 ms per hop.
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    aedes.handle(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    aedes,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** What the controller's session and the cloud's external client do once connected. */
export function noDelay(client: MqttClient): void {
  (client.stream as Partial<Pick<Socket, 'setNoDelay'>> | undefined)?.setNoDelay?.(true);
}

/** About the size of a signed command: what the cloud sends to a controller for one opening. */
const PAYLOAD = Buffer.from(
  JSON.stringify({
    v: 1,
    id: '00000000-0000-4000-8000-000000000000',
    device_id: 'D0000000000',
    object: 'gate1',
    number_id: 1,
    action: 'open',
    issued_at: Date.now(),
    expires_at: Date.now() + 10_000,
    sig: 'A'.repeat(86),
  }),
);

/**
 * The transport alone, as the baseline of `open`: a request published at QoS 1 by one mqtt.js client, answered
 * at QoS 1 by another in its own process (as the controller is), timed until the answer arrives.
 */
export class MqttRoundTrip {
  readonly #broker: PlainBroker;
  readonly #echo: ClientsProcess;
  readonly #client: MqttClient;
  readonly #waiting = new Map<number, () => void>();
  #next = 0;

  private constructor(broker: PlainBroker, echo: ClientsProcess, client: MqttClient) {
    this.#broker = broker;
    this.#echo = echo;
    this.#client = client;
    client.on('message', (topic) => {
      const id = Number(topic.slice('bench/reply/'.length));
      const done = this.#waiting.get(id);
      this.#waiting.delete(id);
      done?.();
    });
  }

  static async start(): Promise<MqttRoundTrip> {
    const broker = await startPlainBroker();
    const echo = new ClientsProcess('echo', broker.url);
    try {
      await echo.waitFor('ready', 30_000);
      const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0, clientId: 'bench-requester' });
      noDelay(client);
      await client.subscribeAsync('bench/reply/+', { qos: 1 });
      return new MqttRoundTrip(broker, echo, client);
    } catch (error) {
      await echo.stop();
      await broker.close();
      throw error;
    }
  }

  /** One request and its reply, in milliseconds; fails after 5 s. */
  roundTrip(): Promise<number> {
    const id = this.#next++;
    const started = process.hrtime.bigint();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id);
        reject(new Error('MQTT baseline: no reply within 5 s'));
      }, 5000);
      this.#waiting.set(id, () => {
        clearTimeout(timer);
        resolve(Number(process.hrtime.bigint() - started) / 1e6);
      });
      this.#client.publish(`bench/request/${id}`, PAYLOAD, { qos: 1 });
    });
  }

  /** Like measure(): `count` round trips one after another on each of `connections` loops. */
  async measure(options: {
    count: number;
    connections: number;
    warmup?: number;
    seconds?: number;
  }): Promise<Figures> {
    for (let i = 0; i < (options.warmup ?? 50); i++) await this.roundTrip();
    const latencies: number[] = [];
    const started = process.hrtime.bigint();
    const deadline = started + BigInt(Math.round((options.seconds ?? 60) * 1e9));
    await Promise.all(
      Array.from({ length: options.connections }, async () => {
        for (let i = 0; i < options.count && process.hrtime.bigint() < deadline; i++) {
          latencies.push(await this.roundTrip());
        }
      }),
    );
    return figuresOf(latencies, Number(process.hrtime.bigint() - started) / 1e9);
  }

  async close(): Promise<void> {
    await this.#client.endAsync();
    await this.#echo.stop();
    await this.#broker.close();
  }
}
