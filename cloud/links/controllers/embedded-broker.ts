import type { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer, type Socket } from 'node:net';
import { Aedes, type AedesOptions, type Client } from 'aedes';
import type { CloudContext } from '../../foundation/context.js';
import { hashDevicePassword } from '../../rules/devices/credentials.js';
import { ConnectionGate, type ConnectionLimits } from './connection-limits.js';
import { deviceAccessHooks } from './embedded-access.js';
import { GuardedConnection } from './guarded-connection.js';
import { indexedMemoryPersistence } from './retained-messages.js';
import { type BrokerTransport, type DeviceMessageListener, NotConnectedError } from './transport.js';

export interface EmbeddedOptions {
  /** 0: a free port chosen by the system, reported in deviceUrl. */
  port: number;
  publicUrl: string | undefined;
  onMessage: DeviceMessageListener;
  /** What one connection may cost (./connection-limits.ts); tests make them small. */
  limits: ConnectionLimits;
}

/**
 * aedes on plain TCP. The cloud publishes in-process and takes what devices publish in the publish hook
 * (embedded-access.ts), so the only clients are devices.
 * A device's account is its row: `devices.mqtt_password_hash`, checked at every connection.
 * aedes reads each socket through a GuardedConnection, which holds every connection to the limits of
 * connection-limits.ts, and until it is authenticated to the small ones.
 */
export async function startEmbeddedTransport(
  ctx: CloudContext,
  options: EmbeddedOptions,
): Promise<BrokerTransport> {
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
  const server = createServer((socket) => {
    // Commands and their PUBACKs are small packets written back to back: with Nagle's algorithm on, one waits
    // for the device's delayed ACK of the other (40 ms on Linux) and every opening is that much slower.
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const connection = gate.admit(socket);
    if (connection) aedes.handle(connection);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, ctx.config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  ctx.log.info({ port }, 'embedded MQTT broker listening');

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
      return options.publicUrl ?? `mqtt://${new URL(ctx.baseUrl()).hostname}:${port}`;
    },
    isConnected: async (deviceId) => sessions.get(deviceId)?.connected === true,
    connectedDevices: async () => [...sessions.values()].filter((client) => client.connected).length,
    linked: () => !stopped && server.listening,
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
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
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
