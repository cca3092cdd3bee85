import { randomInt } from 'node:crypto';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import type { Database } from '../../cloud/foundation/db/database.js';
import { hashDevicePassword, newDevicePassword } from '../../cloud/rules/devices/credentials.js';
import { SigningKey, type VerifyKey } from '../../shared/crypto/ed25519.js';
import { brokerConnection } from '../../shared/protocol/broker-urls.js';
import {
  type Ack,
  type AckReason,
  type Command,
  commandSchema,
  type DeviceObject,
  PROTOCOL_VERSION,
} from '../../shared/protocol/messages.js';
import { signAck, verifyCommand } from '../../shared/protocol/signing.js';
import { deviceTopic } from '../../shared/protocol/topics.js';

/** A controller as the tests play it: its row, its broker password and its own Ed25519 key. */
export interface DeviceAccount {
  id: string;
  password: string;
  key: SigningKey;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export function newDeviceId(): string {
  return `D${Array.from({ length: 10 }, () => CROCKFORD[randomInt(CROCKFORD.length)]).join('')}`;
}

/** Inserts a device row; `provisioned: false` leaves it without broker credentials. */
export async function insertDevice(
  db: Database,
  options: { provisioned?: boolean } = {},
): Promise<DeviceAccount> {
  const account = { id: newDeviceId(), password: newDevicePassword(), key: SigningKey.generate() };
  await db
    .insertInto('devices')
    .values({
      id: account.id,
      label: `Gate ${account.id}`,
      public_key: account.key.publicKey.base64,
      mqtt_password_hash: options.provisioned === false ? null : hashDevicePassword(account.password),
    })
    .execute();
  return account;
}

export type ConnectResult = { ok: true; client: MqttClient } | { ok: false; code: number | string };

/** One connection attempt, no retries: connected, or refused with the CONNACK code (or error code). */
export function tryConnect(url: string, options: IClientOptions): Promise<ConnectResult> {
  return new Promise((done) => {
    const { url: first, servers } = brokerConnection(url);
    const client = mqtt.connect(first, {
      ...(servers ? { servers } : {}),
      protocolVersion: 4,
      reconnectPeriod: 0,
      connectTimeout: 5000,
      ...options,
    });
    client.once('connect', () => done({ ok: true, client }));
    client.once('error', (error: Error & { code?: number | string }) => {
      client.end(true);
      done({ ok: false, code: error.code ?? error.message });
    });
    client.once('close', () => {
      client.end(true);
      done({ ok: false, code: 'closed' });
    });
  });
}

export interface FakeDeviceOptions {
  prefix: string;
  cloudKey: VerifyKey;
  /** Keep reconnecting (to survive a broker restart); default off. */
  reconnect?: boolean;
  /** The CA an mqtts:// broker's certificate must verify under (a controller's `mqtt.ca_file`). */
  ca?: string;
}

/**
 * Connects as the device, leaves an "offline" will, subscribes to its commands and reports itself online,
 * as the real controller does. Commands whose signature does not verify under the cloud's key are counted
 * apart and never answered.
 */
export class FakeDevice {
  /** Commands received with a valid signature, and anything else that arrived on any topic. */
  readonly commands: Command[] = [];
  readonly unverified: unknown[] = [];
  readonly #taken = new Set<string>();
  #waiting: ((command: Command) => void)[] = [];

  private constructor(
    readonly account: DeviceAccount,
    readonly client: MqttClient,
    readonly options: FakeDeviceOptions,
  ) {
    client.on('message', (_topic, payload) => this.#receive(payload));
  }

  static async connect(url: string, account: DeviceAccount, options: FakeDeviceOptions): Promise<FakeDevice> {
    const { prefix } = options;
    const { url: first, servers } = brokerConnection(url);
    const client = await mqtt.connectAsync(first, {
      ...(servers ? { servers } : {}),
      protocolVersion: 4,
      clientId: account.id,
      username: account.id,
      password: account.password,
      clean: true,
      reconnectPeriod: options.reconnect ? 200 : 0,
      ...(options.ca ? { ca: options.ca } : {}),
      will: {
        topic: deviceTopic(prefix, account.id, 'state'),
        payload: Buffer.from(JSON.stringify(stateBody(account.id, false))),
        qos: 1,
        retain: true,
      },
    });
    const device = new FakeDevice(account, client, options);
    const cmd = deviceTopic(prefix, account.id, 'cmd');
    // Like the real controller: after every (re)connection, subscribe and say it is online.
    client.on('connect', () => {
      void client
        .subscribeAsync(cmd, { qos: 1 })
        .then(() => device.publishState(true))
        .catch(() => {});
    });
    const [grant] = await client.subscribeAsync(cmd, { qos: 1 });
    if (grant?.qos === 128) throw new Error(`device ${account.id} may not subscribe to its own commands`);
    await device.publishState(true);
    return device;
  }

  get id(): string {
    return this.account.id;
  }

  nextCommand(): Promise<Command> {
    const queued = this.commands.find((command) => !this.#taken.has(command.id));
    if (queued) {
      this.#taken.add(queued.id);
      return Promise.resolve(queued);
    }
    return new Promise((resolve) =>
      this.#waiting.push((command) => {
        this.#taken.add(command.id);
        resolve(command);
      }),
    );
  }

  /** Signs (with its own key unless told otherwise) and publishes an ack; returns it for replaying. */
  async ack(
    command: Command,
    outcome: 'opened' | 'refused' | 'failed' = 'opened',
    options: { reason?: AckReason; key?: SigningKey } = {},
  ): Promise<Ack> {
    const now = Date.now();
    const ack = signAck(options.key ?? this.account.key, {
      v: PROTOCOL_VERSION,
      command_id: command.id,
      device_id: this.account.id,
      outcome,
      ...(options.reason ? { reason: options.reason } : {}),
      received_at: now,
      finished_at: now,
    });
    await this.publish('ack', ack);
    return ack;
  }

  publishState(online: boolean, objects?: DeviceObject[]): Promise<void> {
    return this.publish(
      'state',
      { ...stateBody(this.account.id, online), ...(objects ? { objects } : {}) },
      true,
    );
  }

  publishTelemetry(uptime: number): Promise<void> {
    return this.publish('telemetry', {
      v: PROTOCOL_VERSION,
      device_id: this.account.id,
      at: Date.now(),
      uptime_s: uptime,
      version: '1.0.0',
      signal: 17,
      clock_synced: true,
      outbox: 0,
    });
  }

  async publish(channel: 'ack' | 'state' | 'telemetry', body: unknown, retain = false): Promise<void> {
    await this.client.publishAsync(
      deviceTopic(this.options.prefix, this.account.id, channel),
      JSON.stringify(body),
      {
        qos: 1,
        retain,
      },
    );
  }

  /** Resolves when the connection ends next (closed by the broker, say). */
  closed(): Promise<void> {
    return new Promise((resolve) => this.client.once('close', () => resolve()));
  }

  /** Resolves when the device is connected again. */
  reconnected(): Promise<void> {
    return new Promise((resolve) => this.client.once('connect', () => resolve()));
  }

  /** Drops the connection without DISCONNECT, so the broker publishes the will. */
  vanish(): void {
    this.client.stream.destroy();
    this.client.end(true);
  }

  async close(): Promise<void> {
    await this.client.endAsync(true);
  }

  #receive(payload: Buffer): void {
    let body: unknown;
    try {
      body = JSON.parse(payload.toString('utf8'));
    } catch {
      this.unverified.push(payload.toString('utf8'));
      return;
    }
    const parsed = commandSchema.safeParse(body);
    if (!parsed.success || !verifyCommand(this.options.cloudKey, parsed.data)) {
      this.unverified.push(body);
      return;
    }
    this.commands.push(parsed.data);
    const waiter = this.#waiting.shift();
    waiter?.(parsed.data);
  }
}

function stateBody(deviceId: string, online: boolean) {
  return { v: PROTOCOL_VERSION, device_id: deviceId, online, at: Date.now(), version: '1.0.0' };
}
