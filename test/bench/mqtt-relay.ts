import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** When the packets that make a client connected passed the relay, in performance.now() milliseconds. */
export interface ConnectionTimes {
  /** The client's CONNECT: what it did on its own before it spoke to the broker. */
  connect: number;
  /** The broker's CONNACK: the client is connected. */
  connack: number;
  /** The broker's first SUBACK: the client takes commands. */
  suback: number;
}

const CONNECT = 1;
const CONNACK = 2;
const SUBACK = 9;

/**
 * A TCP relay in front of the broker that notes when CONNECT, CONNACK and the first SUBACK of each connection go
 * through it, so that the controller and the bare client are timed by the same method, from outside them both,
 * as the broker sees them (one loopback hop more for both). Past those packets it only copies bytes.
 */
export class MqttRelay {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #waiting: ((times: ConnectionTimes) => void) | null = null;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(target: { host: string; port: number }): Promise<MqttRelay> {
    const server = createServer();
    const relay = new MqttRelay(server);
    server.on('connection', (client: Socket) => relay.#relay(client, target));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return relay;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** The times of the next connection that reaches SUBACK. */
  nextConnection(): Promise<ConnectionTimes> {
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #relay(client: Socket, target: { host: string; port: number }): void {
    client.setNoDelay(true);
    const broker = connect(target.port, target.host);
    broker.setNoDelay(true);
    for (const socket of [client, broker]) {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('close', () => broker.destroy());
    broker.on('close', () => client.destroy());
    const times: Partial<ConnectionTimes> = {};
    const fromClient = new PacketWatch((type) => {
      if (type === CONNECT) times.connect ??= performance.now();
      return times.connect !== undefined;
    });
    const fromBroker = new PacketWatch((type) => {
      if (type === CONNACK) times.connack ??= performance.now();
      if (type === SUBACK && times.suback === undefined) {
        times.suback = performance.now();
        const waiting = this.#waiting;
        this.#waiting = null;
        waiting?.(times as ConnectionTimes);
      }
      return times.suback !== undefined;
    });
    client.on('data', (chunk: Buffer) => {
      fromClient.take(chunk);
      broker.write(chunk);
    });
    broker.on('data', (chunk: Buffer) => {
      fromBroker.take(chunk);
      client.write(chunk);
    });
  }
}

/** Splits one direction of an MQTT stream into packets and calls `seen` with each type until it returns true. */
class PacketWatch {
  #buffer = Buffer.alloc(0);
  #done = false;
  readonly #seen: (type: number) => boolean;

  constructor(seen: (type: number) => boolean) {
    this.#seen = seen;
  }

  take(chunk: Buffer): void {
    if (this.#done) return;
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      const length = packetLength(this.#buffer);
      if (length === null || this.#buffer.length < length) return;
      const type = this.#buffer[0]! >> 4;
      this.#buffer = this.#buffer.subarray(length);
      if (this.#seen(type)) {
        this.#done = true;
        return;
      }
    }
  }
}

/** The length of the packet at the start of `buffer` (fixed header included), or null if not all known yet. */
function packetLength(buffer: Buffer): number | null {
  let remaining = 0;
  for (let i = 1; i <= 4; i++) {
    const byte = buffer[i];
    if (byte === undefined) return null;
    remaining += (byte & 0x7f) * 128 ** (i - 1);
    if ((byte & 0x80) === 0) return 1 + i + remaining;
  }
  throw new Error('relay: malformed MQTT remaining length');
}
