import type { Socket } from 'node:net';
import { type IClientOptions, type MqttClient, connect as mqttConnect } from 'mqtt';
import { brokerConnection } from '../../shared/protocol/broker-urls.js';
import { type DeviceObject, type DeviceState, PROTOCOL_VERSION } from '../../shared/protocol/messages.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import type { UpdateReport } from '../../shared/protocol/update-report.js';
import { certificateFailure } from '../certificate-failure.js';
import type { Publisher } from './outbox.js';
import { sessionClientOptions } from './session-client.js';

export interface SessionOptions {
  url: string;
  username: string;
  password: string;
  keepaliveS: number;
  deviceId: string;
  topicPrefix: string;
  version: string;
  objects: readonly DeviceObject[];
  /** First reconnect delay; doubles up to `reconnectMaxMs`, with jitter. */
  reconnectMinMs?: number;
  reconnectMaxMs: number;
  now: () => number;
  /** mqtt.js's `connect`; injectable for tests. */
  connect?: (url: string, options: IClientOptions) => MqttClient;
  onCommand: (payload: Buffer) => void;
  onConnectionChange?: (connected: boolean) => void;
  /** The reason the last attempt failed, in one line; null once connected. Called when it changes. */
  onConnectionError?: (reason: string | null) => void;
  log?: (line: string) => void;
  /** The CA certificates (PEM) of `mqtt.ca_file`; unset, the system's trust store. */
  ca?: string;
  /** `process.arch`, in the retained state: it chooses the release the controller is given. */
  arch?: string;
}

/**
 * The controller's MQTT session (docs/design.md section 7). It connects as the device itself with a clean session
 * (commands are not queued while offline: an opening must not happen minutes late), sets a will that marks the
 * device offline, and on every connect subscribes to its `cmd` topic at QoS 1 and publishes its retained `state`
 * (online, version, objects). Lost connections are retried with a growing delay (1 s doubling up to
 * `reconnectMaxMs`, with jitter so that a fleet does not reconnect in step after a broker restart).
 */
export class Session implements Publisher {
  readonly #options: SessionOptions;
  #client: MqttClient | null = null;
  #connected = false;
  #stopping = false;
  #delay: number;
  #retry: ReturnType<typeof setTimeout> | null = null;
  /** Publishes waiting for their PUBACK; rejected when the connection drops so that callers never hang. */
  #pending = new Set<(error: Error) => void>();
  #connectListeners = new Set<() => void>();
  /** Said once per change: a broker refusing every few seconds for an hour is one line, not a thousand. */
  #lastError: string | null = null;
  #update: UpdateReport | null = null;

  constructor(options: SessionOptions) {
    this.#options = options;
    this.#delay = options.reconnectMinMs ?? 1000;
  }

  get connected(): boolean {
    return this.#connected;
  }

  /** Calls `listener` after each (re)connection, once subscribed and the state is published. */
  onConnect(listener: () => void): () => void {
    this.#connectListeners.add(listener);
    return () => this.#connectListeners.delete(listener);
  }

  /**
   * The latest update report (docs/design.md section 12.4.3), carried in the retained state: republished at
   * once when connected, else with the state at the next connect.
   */
  setUpdate(report: UpdateReport): Promise<void> {
    this.#update = report;
    if (!this.#connected) return Promise.resolve();
    return this.publish(this.#topic('state'), JSON.stringify(this.#state(true)), {
      qos: 1,
      retain: true,
    }).catch((error: Error) => this.#options.log?.(`mqtt: state not published: ${error.message}`));
  }

  /** Starts connecting; resolves at once (the session keeps trying in the background). */
  async start(): Promise<void> {
    const o = this.#options;
    this.#stopping = false;
    // A broker cluster's nodes, when `url` lists several: each reconnection goes to the next one.
    const { url, servers } = brokerConnection(o.url);
    const client = (o.connect ?? mqttConnect)(url, {
      ...sessionClientOptions(o),
      ...(servers ? { servers } : {}),
    });
    this.#client = client;
    // A command's PUBACK goes out on the next turn, once the work its message started has run as far as it can
    // at once: for an output that needs no waiting, that is up to its acknowledgement, which then leaves first.
    client.handleMessage = (_packet, done) => {
      setImmediate(() => {
        // mqtt.js would keep the PUBACK of a connection that closed meanwhile and send it on the next one.
        if (client.connected) done();
      });
    };
    const connected = () => {
      // An ack follows the command's PUBACK within milliseconds: with Nagle's algorithm on, it would wait for
      // the broker's delayed ACK of the PUBACK (40 ms on Linux) before it leaves.
      (client.stream as Partial<Pick<Socket, 'setNoDelay'>> | undefined)?.setNoDelay?.(true);
      void this.#onConnect(client);
    };
    client.on('connect', connected);
    client.on('message', (topic, payload) => {
      if (topic === this.#topic('cmd')) o.onCommand(payload);
    });
    client.on('error', (error) => this.#onError(client, error));
    client.on('close', () => this.#onClose(client));
    // A connection the daemon opened before the session started (./early-connection.ts) may be up already; it
    // has not subscribed to anything, so no command came before this.
    if (client.connected) connected();
  }

  /** Marks the device offline (retained), disconnects and stops reconnecting. */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = null;
    const client = this.#client;
    if (!client) return;
    if (this.#connected) {
      const offline = this.#state(false);
      await this.publish(this.#topic('state'), JSON.stringify(offline), { qos: 1, retain: true }).catch(
        () => undefined,
      );
    }
    this.#client = null;
    await client.endAsync().catch(() => undefined);
    this.#setConnected(false);
    this.#rejectPending(new Error('the session stopped'));
  }

  publish(topic: string, payload: string, options: { qos: 0 | 1; retain?: boolean }): Promise<void> {
    const client = this.#client;
    if (!client || !this.#connected) return Promise.reject(new Error('not connected to the broker'));
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (error: Error) => {
        if (settled) return;
        settled = true;
        this.#pending.delete(fail);
        reject(error);
      };
      this.#pending.add(fail);
      client.publish(topic, payload, { qos: options.qos, retain: options.retain ?? false }, (error) => {
        if (error) return fail(error);
        if (settled) return;
        settled = true;
        this.#pending.delete(fail);
        resolve();
      });
    });
  }

  async #onConnect(client: MqttClient): Promise<void> {
    if (client !== this.#client) return;
    const o = this.#options;
    this.#delay = o.reconnectMinMs ?? 1000;
    try {
      await client.subscribeAsync(this.#topic('cmd'), { qos: 1 });
    } catch (error) {
      // Closed meanwhile: the reconnection subscribes again.
      if (!client.connected) return;
      o.log?.(`mqtt: cannot subscribe to ${this.#topic('cmd')}: ${(error as Error).message}`);
      client.end(true);
      return;
    }
    this.#setConnected(true);
    this.#setError(null);
    o.log?.(`mqtt: connected to ${o.url}`);
    await this.publish(this.#topic('state'), JSON.stringify(this.#state(true)), {
      qos: 1,
      retain: true,
    }).catch((error: Error) => o.log?.(`mqtt: state not published: ${error.message}`));
    for (const listener of this.#connectListeners) listener();
  }

  #onClose(client: MqttClient): void {
    if (client !== this.#client && this.#client !== null) return;
    if (this.#connected && !this.#stopping) this.#options.log?.('mqtt: connection lost');
    this.#setConnected(false);
    this.#rejectPending(new Error('the connection to the broker closed'));
    forgetInFlight(client);
    if (this.#stopping || this.#retry) return;
    const delay = Math.round(this.#delay * (0.75 + Math.random() * 0.5));
    this.#delay = Math.min(this.#delay * 2, this.#options.reconnectMaxMs);
    this.#retry = setTimeout(() => {
      this.#retry = null;
      if (!this.#stopping && this.#client === client) {
        // mqtt.js keeps the TLS server name of the first node it connected to; without it, it names the host of
        // the node it connects to now (a cluster's nodes each have their own certificate).
        delete client.options.servername;
        client.reconnect();
      }
    }, delay);
  }

  #onError(client: MqttClient, error: Error): void {
    if (client !== this.#client) return;
    const host = client.options.hostname ?? client.options.host ?? brokerHost(this.#options.url);
    const reason =
      certificateFailure("the broker's", host, error, {
        untrusted: 'set mqtt.ca_file to the CA that signed it',
      }) ?? error.message;
    this.#setError(reason);
  }

  #setError(reason: string | null): void {
    if (reason === this.#lastError) return;
    this.#lastError = reason;
    if (reason !== null) this.#options.log?.(`mqtt: ${reason}`);
    this.#options.onConnectionError?.(reason);
  }

  #setConnected(connected: boolean): void {
    if (this.#connected === connected) return;
    this.#connected = connected;
    this.#options.onConnectionChange?.(connected);
  }

  #rejectPending(error: Error): void {
    for (const fail of [...this.#pending]) fail(error);
  }

  #state(online: boolean): DeviceState {
    const o = this.#options;
    const state: DeviceState = { v: PROTOCOL_VERSION, device_id: o.deviceId, online, at: o.now() };
    if (online) {
      state.version = o.version;
      state.objects = o.objects.map((object) => ({ ...object }));
      if (o.arch !== undefined) state.arch = o.arch;
      if (this.#update) state.update = { ...this.#update };
    }
    return state;
  }

  #topic(channel: 'cmd' | 'ack' | 'state' | 'telemetry'): string {
    return deviceTopic(this.#options.topicPrefix, this.#options.deviceId, channel);
  }
}

function brokerHost(list: string): string {
  try {
    return new URL(brokerConnection(list).url).hostname;
  } catch {
    return list;
  }
}

/**
 * Drops what mqtt.js still holds from a connection that closed. `reconnect()` starts with empty stores, so in
 * a clean session it never sends these again (the outbox sends its own acks again), and their PUBACK never
 * comes: kept, they would make `end()` wait forever.
 */
function forgetInFlight(client: MqttClient): void {
  for (const messageId of Object.keys(client.outgoing)) client.removeOutgoingMessage(Number(messageId));
}
