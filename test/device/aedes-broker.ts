import { createServer, type Server } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { Aedes, type Client } from 'aedes';

/**
 * An aedes broker on a TCP port, plain or, given a certificate, over TLS (then reached as `localhost`, the name
 * the certificate is for); `restart` listens again on the same port. `refuseAcks` acks are refused (aedes then
 * closes the connection), as the cloud's broker does with one the journal cannot take yet.
 */
export class AedesBroker {
  #aedes: Aedes | null = null;
  #server: Server | null = null;
  readonly #tls: { cert: string; key: string } | undefined;
  port = 0;
  refuseAcks = 0;
  /** TCP connections accepted, whether or not their TLS handshake then succeeds. */
  connections = 0;
  readonly clients = new Map<string, Client>();

  constructor(options: { tls?: { cert: string; key: string } } = {}) {
    this.#tls = options.tls;
  }

  async start(): Promise<void> {
    this.#aedes = await Aedes.createBroker({
      authorizePublish: (_client, packet, done) => {
        if (!packet.topic.endsWith('/ack') || this.refuseAcks === 0) return done(null);
        this.refuseAcks--;
        done(new Error('not now'));
      },
    });
    this.#aedes.on('client', (client) => this.clients.set(client.id, client));
    const server = this.#tls
      ? createTlsServer(this.#tls, this.#aedes.handle)
      : createServer(this.#aedes.handle);
    server.on('connection', () => this.connections++);
    // A handshake the client refuses is the client's to report.
    server.on('tlsClientError', () => undefined);
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
    return this.#tls ? `mqtts://localhost:${this.port}` : `mqtt://127.0.0.1:${this.port}`;
  }
}
