import { createServer, type Server } from 'node:net';
import { Aedes, type Client } from 'aedes';

/**
 * A plain aedes broker on a TCP port; `restart` listens again on the same port. `refuseAcks` acks are refused
 * (aedes then closes the connection), as the cloud's broker does with one the journal cannot take yet.
 */
export class AedesBroker {
  #aedes: Aedes | null = null;
  #server: Server | null = null;
  port = 0;
  refuseAcks = 0;
  readonly clients = new Map<string, Client>();

  async start(): Promise<void> {
    this.#aedes = await Aedes.createBroker({
      authorizePublish: (_client, packet, done) => {
        if (!packet.topic.endsWith('/ack') || this.refuseAcks === 0) return done(null);
        this.refuseAcks--;
        done(new Error('not now'));
      },
    });
    this.#aedes.on('client', (client) => this.clients.set(client.id, client));
    const server = createServer(this.#aedes.handle);
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address && typeof address === 'object') this.port = address.port;
  }

  async stop(): Promise<void> {
    const aedes = this.#aedes;
    const server = this.#server;
    this.#aedes = null;
    this.#server = null;
    await new Promise<void>((resolve) => aedes?.close(() => resolve()) ?? resolve());
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }
}
