import type { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { Aedes, type AedesOptions, type Client } from 'aedes';
import type { EmbeddedTls } from '../../foundation/config.js';
import type { CloudContext } from '../../foundation/context.js';
import { hashDevicePassword } from '../../rules/devices/credentials.js';
import { BrokerCertificate, CERTIFICATE_POLL_MS } from './broker-certificate.js';
import { ConnectionGate, type ConnectionLimits } from './connection-limits.js';
import { deviceAccessHooks } from './embedded-access.js';
import { GuardedConnection } from './guarded-connection.js';
import { indexedMemoryPersistence } from './retained-messages.js';
import { type BrokerTransport, type DeviceMessageListener, NotConnectedError } from './transport.js';

export interface EmbeddedOptions {
  /** 0: a free port chosen by the system, reported in deviceUrl. */
  port: number;
  publicUrl: string | undefined;
  /** The TLS listener for devices (MQTT_TLS_*); undefined: plain MQTT only. */
  tls: EmbeddedTls | undefined;
  /** Where the plain listener listens; undefined: HOST. */
  plainHost: string | undefined;
  onMessage: DeviceMessageListener;
  /** What one connection may cost (./connection-limits.ts); tests make them small. */
  limits: ConnectionLimits;
  /** How often the certificate files are read again; default CERTIFICATE_POLL_MS. */
  certificatePollMs?: number;
}

/**
 * aedes on plain TCP and, with a certificate, on TLS (docs/design.md section 7.4). The cloud publishes in-process
 * and takes what devices publish in the publish hook (embedded-access.ts), so the only clients are devices.
 * A device's account is its row: `devices.mqtt_password_hash`, checked at every connection.
 * aedes reads each socket through a GuardedConnection, which holds every connection to the limits of
 * connection-limits.ts, and until it is authenticated to the small ones.
 */
export async function startEmbeddedTransport(
  ctx: CloudContext,
  options: EmbeddedOptions,
): Promise<BrokerTransport> {
  // First, so that a certificate that cannot be used stops the start before anything else is made.
  const certificate = options.tls ? await BrokerCertificate.load(options.tls, ctx.log) : null;
  const hooks = deviceAccessHooks(ctx, (packet) =>
    options.onMessage({ topic: packet.topic, payload: Buffer.from(packet.payload), retain: false }),
  );
  const aedes = await Aedes.createBroker({
    ...hooks,
    persistence: indexedMemoryPersistence(),
    authenticate: raisingLimitsOnLogin(hooks.authenticate),
    // aedes's own timer stops at the CONNECT packet; the guard's runs until the client is authenticated.
    connectTimeout: options.limits.connectTimeoutMs,
  });
  const gate = new ConnectionGate(ctx.log, options.limits);
  const sessions = new Map<string, Client>();
  aedes.on('clientReady', (client) => sessions.set(client.id, client));
  aedes.on('clientDisconnect', (client) => {
    if (sessions.get(client.id) === client) sessions.delete(client.id);
  });
  aedes.on('clientError', (client, error) =>
    ctx.log.debug({ deviceId: client.id, err: error }, 'device error'),
  );
  aedes.on('connectionError', (_client, error) => ctx.log.debug({ err: error }, 'broker connection error'));
  // Errors aedes raises itself (such as a will it cannot publish) are logged, never thrown.
  const events: EventEmitter = aedes;
  events.on('error', (error: unknown) => ctx.log.error({ err: error }, 'embedded broker error'));

  // A fresh broker has no sessions: every device is offline until it connects and says so.
  await ctx.db.updateTable('devices').set({ online: false }).where('online', '=', true).execute();

  const sockets = new Set<Socket>();
  const accept = (secure?: (socket: Socket) => Socket) => (socket: Socket) => {
    // Commands and their PUBACKs are small packets written back to back: with Nagle's algorithm on, one waits
    // for the device's delayed ACK of the other (40 ms on Linux) and every opening is that much slower.
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const connection = gate.admit(socket, secure);
    if (connection) aedes.handle(connection);
  };
  const servers: Server[] = [];
  const stopServers = async () => {
    await certificate?.stop();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  };
  let port: number;
  let tlsPort: number | undefined;
  try {
    const plain = createServer(accept());
    servers.push(plain);
    port = await listen(plain, options.port, options.plainHost ?? ctx.config.host);
    if (options.tls && certificate) {
      const current = certificate;
      // The handshake runs inside the guard, on a socket the gate has already counted (./connection-limits.ts).
      const secure = createServer(accept((socket) => serverTls(socket, current)));
      servers.push(secure);
      tlsPort = await listen(secure, options.tls.port, options.tls.host);
      certificate.watch(options.certificatePollMs ?? CERTIFICATE_POLL_MS);
    }
  } catch (error) {
    await stopServers();
    await new Promise<void>((resolve) => aedes.close(() => resolve()));
    throw error;
  }
  ctx.log.info(
    { port, host: options.plainHost ?? ctx.config.host, tlsPort },
    'embedded MQTT broker listening',
  );

  // The cloud's side of the embedded broker is in-process: it is there until the transport stops.
  let stopped = false;
  const endSession = (deviceId: string) =>
    new Promise<void>((resolve) => {
      const client = sessions.get(deviceId);
      if (!client) return resolve();
      client.close(() => resolve());
    });

  return {
    get deviceUrl() {
      const host = new URL(ctx.baseUrl()).hostname;
      if (options.publicUrl) return options.publicUrl;
      return tlsPort === undefined ? `mqtt://${host}:${port}` : `mqtts://${host}:${tlsPort}`;
    },
    isConnected: async (deviceId) => sessions.get(deviceId)?.connected === true,
    connectedDevices: async () => [...sessions.values()].filter((client) => client.connected).length,
    linked: () => !stopped && servers.every((server) => server.listening),
    publish: (topic, payload) =>
      new Promise<void>((resolve, reject) => {
        if (stopped) return reject(new NotConnectedError('the embedded MQTT broker is stopped'));
        aedes.publish({ cmd: 'publish', topic, payload, qos: 1, retain: false, dup: false }, (error) =>
          error ? reject(error) : resolve(),
        );
      }),
    async addDevice(deviceId, password) {
      await ctx.db
        .updateTable('devices')
        .set({ mqtt_password_hash: hashDevicePassword(password) })
        .where('id', '=', deviceId)
        .execute();
      await endSession(deviceId);
    },
    async removeDevice(deviceId) {
      await ctx.db
        .updateTable('devices')
        .set({ mqtt_password_hash: null })
        .where('id', '=', deviceId)
        .execute();
      await endSession(deviceId);
    },
    async stop() {
      stopped = true;
      const closed = stopServers();
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * The server's side of TLS on an accepted socket, with the certificate of the moment: a renewed one serves the
 * next handshake, and connections already up keep theirs. A failed handshake is an error on this socket, which
 * the guard turns into a closed connection.
 */
function serverTls(socket: Socket, certificate: BrokerCertificate): TLSSocket {
  return new TLSSocket(socket, { isServer: true, secureContext: certificate.context });
}

type Authenticate = Required<AedesOptions>['authenticate'];

/**
 * Tells the client's GuardedConnection as soon as its credentials are accepted, before aedes sends the CONNACK:
 * whatever the device sends once it has its CONNACK is held to a device's limits, not a stranger's.
 */
function raisingLimitsOnLogin(authenticate: Authenticate): Authenticate {
  return (client, username, password, done) =>
    authenticate(client, username, password, (error, success) => {
      if (success && client.conn instanceof GuardedConnection) client.conn.authenticated();
      done(error, success);
    });
}
