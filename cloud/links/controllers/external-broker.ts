import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import mqtt, { type MqttClient } from 'mqtt';
import { brokerConnection, withoutCredentials } from '../../../shared/protocol/broker-urls.js';
import { allDevicesTopic } from '../../../shared/protocol/topics.js';
import { certificateRefusal } from '../../../shared/tls/certificate-refusal.js';
import type { CloudContext } from '../../foundation/context.js';
import { externalLoopbackLine, loopbackBrokerHosts } from '../../foundation/mqtt-production.js';
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
  /** MQTT_CA_FILE: the CA that signed an mqtts:// broker's certificate; undefined: the system's. */
  caFile?: string | undefined;
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
 * An external broker (Mosquitto with dynamic security, see deploy/mosquitto/README.md) reached with mqtt.js.
 * Every cloud instance has its own client id and subscribes to all devices' messages (not shared), so the
 * instance waiting for an ack always hears it. Whether a device is connected is its last reported state:
 * its retained `state` and its will keep `devices.online`. A device message is acknowledged to the broker only
 * once the listener took it (./external-delivery.ts).
 */
export async function startExternalTransport(
  ctx: CloudContext,
  options: ExternalOptions,
): Promise<BrokerTransport> {
  const deviceUrl = externalDeviceUrl(ctx, options);
  const ca = options.caFile ? await readCa(options.caFile) : undefined;
  // With several nodes, each reconnection goes to the next one (docs/design.md section 7.2).
  const { url, servers } = brokerConnection(options.url);
  const client = mqtt.connect(url, {
    ...(servers ? { servers } : {}),
    ...(ca ? { ca } : {}),
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
    deviceUrl,
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
        return;
      }
      // A certificate that does not verify will not verify on the next try either: say so now, and what to do.
      const certificate = certificateProblem(client, error);
      if (certificate) finish(new Error(certificate));
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

/**
 * The broker address devices are given: MQTT_PUBLIC_URL, else MQTT_URL without the cloud's credentials. An
 * MQTT_URL on this machine is no address for controllers elsewhere: production refuses to start with it,
 * elsewhere (tests, a demo on one machine) it is a warning (docs/design.md section 7.4).
 */
function externalDeviceUrl(ctx: CloudContext, options: ExternalOptions): string {
  if (options.publicUrl) return withoutCredentials(options.publicUrl);
  const loopback = loopbackBrokerHosts(options.url);
  if (loopback.length > 0) {
    const line = externalLoopbackLine(options.url, loopback);
    if (ctx.config.production) throw new Error(line);
    ctx.log.warn(line);
  }
  return withoutCredentials(options.url);
}

async function readCa(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new Error(`MQTT_CA_FILE ${path} cannot be read (${code}): give the CA certificate's PEM file`);
  }
}

/**
 * The TLS handshake's refusal of the broker's certificate, in words naming the host, OpenSSL's reason and what
 * to do; null for any other error. mqtt.js emits the socket's error on the client before it ever connects.
 */
function certificateProblem(client: MqttClient, error: Error & { code?: unknown }): string | null {
  const refusal = certificateRefusal(error);
  if (!refusal) return null;
  const host = client.options.hostname ?? client.options.host ?? 'the broker';
  const reason = `${refusal.reason} (${refusal.code})`;
  if (refusal.kind === 'name') {
    return (
      `the MQTT broker's certificate does not name ${host}: ${reason}; ` +
      'use in MQTT_URL the host name the certificate was issued for'
    );
  }
  if (refusal.kind === 'time') {
    return `the MQTT broker's certificate for ${host} is not valid now: ${reason}; renew it on the broker`;
  }
  return (
    `the MQTT broker's certificate for ${host} does not verify: ${reason}; ` +
    'set MQTT_CA_FILE to the CA that signed it'
  );
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
        'the cloud role (deploy/mosquitto/README.md)',
    );
  }
}
