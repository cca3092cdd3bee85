import { randomUUID } from 'node:crypto';
import type { AssembledContext } from '../../cloud/context.js';
import { systemClock } from '../../cloud/foundation/clock.js';
import { loadCloudConfig } from '../../cloud/foundation/config.js';
import type { Database } from '../../cloud/foundation/db/database.js';
import { CloudMetrics } from '../../cloud/foundation/metrics/cloud-metrics.js';
import { Foreground } from '../../cloud/foundation/priority/foreground.js';
import type { ControllerLink } from '../../cloud/links/controllers/controller-link.js';
import {
  type ControllerLinkOptions,
  startControllerLink,
  startTransport,
  type TransportOptions,
} from '../../cloud/links/controllers/start.js';
import type { BrokerTransport, DeviceMessageListener } from '../../cloud/links/controllers/transport.js';
import { logMailer } from '../../cloud/links/mail/mailer.js';
import { CompanyCache } from '../../cloud/rules/call-auth/company-cache.js';
import { NonceLedger } from '../../cloud/rules/call-auth/nonces.js';
import type { DispatchRequest, DispatchResult } from '../../cloud/rules/opening/dispatcher.js';
import { generateVapidKey } from '../../cloud/rules/vapid-key/vapid-key-file.js';
import { SigningKey } from '../../shared/crypto/ed25519.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { type DeviceAccount, FakeDevice, insertDevice } from './fake-device.js';
import { type MosquittoTls, mosquittoAvailable, startMosquitto, type TestMosquitto } from './mosquitto.js';
import {
  RABBITMQ_SERVER,
  type RabbitTls,
  rabbitmqAvailable,
  startRabbitCluster,
  type TestRabbitCluster,
} from './rabbitmq-cluster.js';
import { type RecordingLogger, recordingLogger } from './recording-logger.js';
import { waitFor } from './wait-for.js';

/**
 * The same behaviour suite runs against each kind of broker, like kysely's DIALECTS. The external one needs
 * the mosquitto binary, the cluster (three RabbitMQ nodes) the rabbitmq-server one; without it those runs are
 * skipped and say why. The cluster takes some 20 s to start, so only the suites that check the broker's rules
 * and the end-to-end open run against it (CLUSTER_KINDS).
 */
export const BROKER_KINDS = ['embedded', 'external'] as const;
export const CLUSTER_KINDS = [...BROKER_KINDS, 'cluster'] as const;
export type BrokerKind = (typeof CLUSTER_KINDS)[number];

export function brokerKindSkipReason(kind: BrokerKind): string | null {
  if (kind === 'external' && !mosquittoAvailable) return 'skipped: /usr/sbin/mosquitto is not installed';
  if (kind === 'cluster' && !rabbitmqAvailable) return `skipped: ${RABBITMQ_SERVER} is not installed`;
  return null;
}

/** The cloud's settings for a private RabbitMQ cluster, instance `first` connecting to node `first` first. */
export function clusterEnv(cluster: TestRabbitCluster, first = 0): Record<string, string> {
  return {
    MQTT_URL: cluster.cloudUrl(first),
    MQTT_BROKER: 'rabbitmq',
    RABBITMQ_API_URL: cluster.apiUrl(first),
    MQTT_PUBLIC_URL: cluster.deviceUrl(),
  };
}

export const PREFIX = 'test/gl';

/** What a device needs of the cloud's broker to get an account and connect: a controller link or a bare transport. */
type DeviceGateway = Pick<BrokerTransport, 'deviceUrl' | 'addDevice'>;

/** One database, one broker (embedded or a private Mosquitto), and the cloud instances started on them. */
export class BrokerEnv {
  readonly log: RecordingLogger = recordingLogger();
  /** The cloud's command key, shared by every instance (they read the same key file in production). */
  readonly serviceKey = SigningKey.generate();
  readonly #brokers = new Set<ControllerLink>();
  readonly #transports = new Set<BrokerTransport>();
  readonly #devices = new Set<FakeDevice>();

  private constructor(
    readonly kind: BrokerKind,
    readonly database: TestDatabase,
    readonly mosquitto: TestMosquitto | null,
    readonly cluster: TestRabbitCluster | null,
  ) {}

  /**
   * `mosquittoTls`: the external Mosquitto also has its TLS listener, which devices are given. `cluster`: how
   * many RabbitMQ nodes (3 by default), with the TLS listener on each when `tls` is given.
   */
  static async open(
    kind: BrokerKind,
    options: { mosquittoTls?: MosquittoTls; cluster?: { nodes?: number; tls?: RabbitTls } } = {},
  ): Promise<BrokerEnv> {
    const database = await createTestDatabase();
    try {
      const mosquitto =
        kind === 'external' ? await startMosquitto(PREFIX, { tls: options.mosquittoTls }) : null;
      const cluster = kind === 'cluster' ? await startRabbitCluster(PREFIX, options.cluster) : null;
      return new BrokerEnv(kind, database, mosquitto, cluster);
    } catch (error) {
      await database.close();
      throw error;
    }
  }

  get db(): Database {
    return this.database.db;
  }

  context(env: Record<string, string> = {}): AssembledContext {
    const config = loadCloudConfig({
      HOST: '127.0.0.1',
      PORT: '0',
      MQTT_PORT: '0',
      MQTT_TOPIC_PREFIX: PREFIX,
      ...(this.mosquitto ? { MQTT_URL: this.mosquitto.cloudUrl } : {}),
      ...(this.cluster ? clusterEnv(this.cluster) : {}),
      ...env,
    });
    return {
      config,
      db: this.db,
      clock: systemClock,
      log: this.log,
      serviceKey: this.serviceKey,
      vapid: generateVapidKey(),
      fetchKeyFile: async () => ({ ok: false, reason: 'unreachable', message: '' }),
      resolveHost: async () => [],
      companyCache: new CompanyCache(systemClock),
      nonces: new NonceLedger(this.db, systemClock),
      mailer: logMailer(this.log),
      metrics: new CloudMetrics(),
      foreground: new Foreground(),
      baseUrl: () => 'http://127.0.0.1:0',
    };
  }

  /** A cloud instance; stopped with the env. */
  async start(
    options: ControllerLinkOptions = {},
    env: Record<string, string> = {},
  ): Promise<ControllerLink> {
    const broker = await startControllerLink(this.context(env), options);
    this.#brokers.add(broker);
    return broker;
  }

  /** A bare transport handing device messages to `onMessage`, as a cloud instance has; stopped with the env. */
  async startTransport(
    onMessage: DeviceMessageListener,
    options: TransportOptions = {},
  ): Promise<BrokerTransport> {
    const transport = await startTransport(this.context(), onMessage, options);
    this.#transports.add(transport);
    return transport;
  }

  async stopTransport(transport: BrokerTransport): Promise<void> {
    this.#transports.delete(transport);
    await transport.stop();
  }

  async stopBroker(broker: ControllerLink): Promise<void> {
    this.#brokers.delete(broker);
    await broker.stop();
  }

  /**
   * Restarts the broker under `broker`: the embedded one is a new cloud instance on the same port (its
   * broker lives in the cloud process), the external one is the Mosquitto process (the cloud instance stays).
   * On the cluster, the first node, which the cloud and the devices reached first, dies; they go on through the
   * next one.
   */
  async restartBroker(broker: ControllerLink, options: ControllerLinkOptions = {}): Promise<ControllerLink> {
    if (this.cluster) {
      await this.cluster.kill(0);
      return broker;
    }
    if (this.mosquitto) {
      await this.mosquitto.restart();
      return broker;
    }
    const port = new URL(broker.deviceUrl).port;
    await this.stopBroker(broker);
    return this.start(options, { MQTT_PORT: port });
  }

  /** A device row with a broker account made through `addDevice`, as provisioning does. */
  async provision(broker: DeviceGateway): Promise<DeviceAccount> {
    const account = await insertDevice(this.db);
    await broker.addDevice(account.id, account.password);
    return account;
  }

  async connect(
    broker: DeviceGateway,
    account: DeviceAccount,
    options: { reconnect?: boolean; ca?: string } = {},
  ) {
    const device = await FakeDevice.connect(broker.deviceUrl, account, {
      prefix: PREFIX,
      cloudKey: this.serviceKey.publicKey,
      ...options,
    });
    this.#devices.add(device);
    return device;
  }

  /** A provisioned device, connected, whose connecting messages have all been handled (and logged). */
  async onlineDevice(broker: DeviceGateway, options: { ca?: string } = {}): Promise<FakeDevice> {
    const device = await this.connect(broker, await this.provision(broker), options);
    await this.waitOnline(device.id);
    await this.roundTrip(device);
    return device;
  }

  /** Until the device's reported state reached the cloud (external dispatch reads it). */
  async waitOnline(deviceId: string, online = true): Promise<void> {
    await waitFor(
      async () => {
        const row = await this.db
          .selectFrom('devices')
          .select('online')
          .where('id', '=', deviceId)
          .executeTakeFirst();
        return row?.online === online;
      },
      `the device ${deviceId} to be ${online ? 'online' : 'offline'}`,
    );
  }

  /** Telemetry from the device, once stored: everything it published before has been handled too. */
  async roundTrip(device: FakeDevice): Promise<void> {
    const marker = Math.floor(Math.random() * 1e9);
    await device.publishTelemetry(marker);
    await waitFor(async () => {
      const row = await this.db
        .selectFrom('devices')
        .select('telemetry')
        .where('id', '=', device.id)
        .executeTakeFirstOrThrow();
      return (row.telemetry as { uptime_s?: number } | null)?.uptime_s === marker;
    }, 'the telemetry marker stored');
  }

  async close(): Promise<void> {
    await Promise.all([...this.#devices].map((device) => device.close()));
    for (const broker of this.#brokers) await broker.stop();
    for (const transport of this.#transports) await transport.stop();
    await this.mosquitto?.stop();
    await this.cluster?.stop();
    await this.database.close();
  }
}

export interface OpenEntry {
  journalId: number;
  commandId: string;
  objectId: number;
  keyId: number;
}

/**
 * What the open flow leaves before dispatching (cloud/rules/opening/open.ts): a company's key to the device, one
 * object, and a journal entry without outcome carrying the command id.
 */
export async function insertOpenEntry(db: Database, deviceId: string): Promise<OpenEntry> {
  const company = await db
    .insertInto('companies')
    .values({ name: 'Courier' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const customer = await db
    .insertInto('customers')
    .values({ display_name: 'Ada' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const request = await db
    .insertInto('requests')
    .values({
      code: randomUUID(),
      company_id: company.id,
      ttl_hours: 24,
      expires_at: new Date(Date.now() + 86_400_000),
      state: 'issued',
      customer_id: customer.id,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const key = await db
    .insertInto('keys')
    .values({ request_id: request.id, company_id: company.id, customer_id: customer.id, device_id: deviceId })
    .returning('id')
    .executeTakeFirstOrThrow();
  const object = await db
    .insertInto('device_objects')
    .values({ device_id: deviceId, local_id: 'gate', label: 'Gate', kind: 'relay' })
    .onConflict((conflict) => conflict.columns(['device_id', 'local_id']).doUpdateSet({ label: 'Gate' }))
    .returning('id')
    .executeTakeFirstOrThrow();
  const commandId = randomUUID();
  const entry = await db
    .insertInto('journal')
    .values({
      device_id: deviceId,
      object_id: object.id,
      company_id: company.id,
      key_id: key.id,
      actor: 'driver 7',
      outcome: null,
      command_id: commandId,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { journalId: entry.id, commandId, objectId: object.id, keyId: key.id };
}

/** What the open flow does with a request: sign its command, then send it. */
export function dispatch(broker: ControllerLink, request: DispatchRequest): Promise<DispatchResult> {
  return broker.send(broker.sign(request));
}

export function dispatchRequest(deviceId: string, entry: OpenEntry): DispatchRequest {
  return { commandId: entry.commandId, deviceId, object: 'gate', numberId: entry.objectId };
}

/** The journal entry and how many events (company callbacks) it produced: one per applied outcome. */
export async function journalState(db: Database, journalId: number) {
  const entry = await db
    .selectFrom('journal')
    .select(['outcome', 'detail', 'acked_at'])
    .where('id', '=', journalId)
    .executeTakeFirstOrThrow();
  const events = await db
    .selectFrom('events')
    .select('data')
    .execute()
    .then((rows) => rows.filter((row) => (row.data as { journal_id?: number }).journal_id === journalId));
  return { ...entry, events: events.length };
}
