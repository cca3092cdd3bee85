import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import mqtt, { type MqttClient } from 'mqtt';
import { brokerConnection, withoutCredentials } from '../../../shared/protocol/broker-urls.js';
import { allDevicesTopic } from '../../../shared/protocol/topics.js';
import type { CloudContext } from '../../foundation/context.js';
import type { DeviceAccounts } from './device-accounts.js';
import { dynsecAccounts } from './dynamic-security.js';
import { ExternalDelivery } from './external-delivery.js';
import type { RedeliveryDelays } from './redelivery-backoff.js';
import { type BrokerTransport, type DeviceMessageListener, NotConnectedError } from './transport.js';

export interface ExternalOptions {
  /** MQTT_URL: the broker and the cloud's own account, `mqtt://cloud:<password>@host:port`; or several nodes. */
  url: string;
  /** Who keeps device accounts; default Mosquitto's dynamic security on this connection. */
  accounts?: (client: MqttClient) => DeviceAccounts;
  publicUrl: string | undefined;
  /** This instance's session on the broker (MQTT_CLIENT_ID, or host and port); undefined: a new one. */
  clientId: string | undefined;
  connectTimeoutMs: number;
  onMessage: DeviceMessageListener;
  /** How long to stay away from the broker after the cloud could not take a message (./redelivery-backoff.ts). */
  redeliveryDelays: RedeliveryDelays;
}

/** How soon the cloud reconnects after losing the broker. */
const RECONNECT_PERIOD_MS = 1000;

/** CONNACK codes meaning the broker will not take these credentials (MQTT 3.1.1 section 3.2.2.3). */
const REFUSED_CODES = new Set([2, 4, 5]);

/**
 * An external broker (Mosquitto with dynamic security, see ./mosquitto/README.md) reached with mqtt.js.
 * Every cloud instance has its own client id and subscribes to all devices' messages (not shared), so the
 * instance waiting for an ack always hears it. Whether a device is connected is its last reported state:
 * its retained `state` and its will keep `devices.online`. A device message is acknowledged to the broker only
 * once the listener took it (./external-delivery.ts).
 */
export async function startExternalTransport(
  ctx: CloudContext,
  options: ExternalOptions,
): Promise<BrokerTransport> {
  // With several nodes, each reconnection goes to the next one (docs/design.md section 7.2).
  const { url, servers } = brokerConnection(options.url);
  const client = mqtt.connect(url, {
    ...(servers ? { servers } : {}),
    clientId: options.clientId ?? `gatelink-cloud-${randomBytes(8).toString('hex')}`,
    protocolVersion: 4,
    // A session of its own that the broker keeps across a broker restart, so acks published while this
    // instance reconnects are queued for it rather than lost, and a message it did not acknowledge is sent again.
    clean: false,
    reconnectPeriod: RECONNECT_PERIOD_MS,
    connectTimeout: options.connectTimeoutMs,
  });
  // Commands and PUBACKs are small packets written back to back: without this, Nagle's algorithm holds one
  // until the broker's delayed ACK of the other (40 ms on Linux), on every opening.
  client.on('connect', () =>
    (client.stream as Partial<Pick<Socket, 'setNoDelay'>> | undefined)?.setNoDelay?.(true),
  );
  const accounts = options.accounts
    ? options.accounts(client)
    : dynsecAccounts(client, ctx.config.topicPrefix, options.connectTimeoutMs);
  const delivery = new ExternalDelivery(client, ctx, {
    onMessage: options.onMessage,
    control: (topic, payload) => accounts.receive(topic, payload),
    delays: options.redeliveryDelays,
    reconnectPeriodMs: RECONNECT_PERIOD_MS,
  });
  try {
    await firstConnection(client, options.connectTimeoutMs);
    await subscribeAll(client, ctx.config.topicPrefix, accounts.answerTopics);
  } catch (error) {
    await client.endAsync(true);
    throw error;
  }
  client.on('error', (error) => ctx.log.warn({ err: error }, 'external MQTT broker error'));
  client.on('offline', () => ctx.log.warn('lost the external MQTT broker; reconnecting'));
  client.on('connect', () => ctx.log.info('connected to the external MQTT broker'));
  ctx.log.info({ broker: withoutCredentials(options.url) }, 'connected to the external MQTT broker');
  let stopped = false;

  return {
    deviceUrl: withoutCredentials(options.publicUrl ?? options.url),
    async isConnected(deviceId) {
      const row = await ctx.db
        .selectFrom('devices')
        .select('online')
        .where('id', '=', deviceId)
        .executeTakeFirst();
      return row?.online === true;
    },
    async connectedDevices() {
      const row = await ctx.db
        .selectFrom('devices')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('online', '=', true)
        .executeTakeFirst();
      return Number(row?.count ?? 0);
    },
    linked: () => !stopped && client.connected,
    async publish(topic, payload) {
      if (!client.connected) throw new NotConnectedError('the cloud is not connected to the MQTT broker');
      await client.publishAsync(topic, payload, { qos: 1, retain: false });
    },
    addDevice: (deviceId, password) => accounts.put(deviceId, password),
    removeDevice: (deviceId) => accounts.remove(deviceId),
    async stop() {
      stopped = true;
      await delivery.stop();
      await client.endAsync(!client.connected);
    },
  };
}

function firstConnection(client: MqttClient, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => finish(new Error(`the MQTT broker in MQTT_URL did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onConnect = () => finish(null);
    const onError = (error: Error & { code?: unknown }) => {
      if (typeof error.code === 'number' && REFUSED_CODES.has(error.code)) {
        finish(new Error(`the MQTT broker refused the cloud's account in MQTT_URL: ${error.message}`));
      }
    };
    function finish(error: Error | null) {
      clearTimeout(timer);
      client.off('connect', onConnect);
      client.off('error', onError);
      if (error) reject(error);
      else resolve();
    }
    client.on('connect', onConnect);
    client.on('error', onError);
  });
}

/** Acks, states and telemetry of every device, and the answers to device account changes. */
async function subscribeAll(
  client: MqttClient,
  prefix: string,
  answerTopics: readonly string[],
): Promise<void> {
  const topics = [
    allDevicesTopic(prefix, 'ack'),
    allDevicesTopic(prefix, 'state'),
    allDevicesTopic(prefix, 'telemetry'),
    ...answerTopics,
  ];
  const granted = await client.subscribeAsync(topics, { qos: 1 });
  const refused = granted.filter((grant) => grant.qos === 128).map((grant) => grant.topic);
  if (refused.length > 0) {
    throw new Error(
      `the MQTT broker refused the cloud's subscription to ${refused.join(', ')}: give the cloud's account ` +
        'the cloud role (cloud/links/controllers/mosquitto/README.md)',
    );
  }
}
