import { dirname, extname, resolve } from 'node:path';
import type { IClientOptions, MqttClient } from 'mqtt';
import { isDeviceId, TOPIC_PREFIX_PATTERN } from '../../shared/protocol/topics.js';
import { plainRemoteUrl, readCaBundle } from '../broker-tls.js';
import { sessionClientOptions } from './session-client.js';

type Connect = (url: string, options: IClientOptions) => MqttClient;

/** The schema's default keepalive (../config.ts); another one only means the early connection is not used. */
const DEFAULT_KEEPALIVE_S = 30;
const PROTOCOLS = new Set(['mqtts:', 'mqtt:', 'wss:', 'ws:']);

/**
 * The daemon's connection to the broker, opened as soon as the config file is read and before the rest of the
 * daemon (config schema, payload schemas, drivers) is loaded, so that the network's round trips (TCP, TLS,
 * CONNECT and CONNACK) overlap that loading instead of following it (docs/design.md section 12.1).
 *
 * It only connects: it subscribes to nothing and publishes nothing, so no command can come through it. The
 * session (./session.ts) takes it over once the config is validated and the outputs are released, and only if
 * it was opened with the very settings the validated config gives; otherwise it is closed and the session
 * connects anew. A config it cannot make sense of leaves it unopened: the validation says what is wrong.
 */
export class EarlyConnection {
  #client: MqttClient | null;
  readonly #url: string;
  readonly #options: IClientOptions;
  readonly #connect: Connect;
  #closed = false;

  private constructor(client: MqttClient, url: string, options: IClientOptions, connect: Connect) {
    this.#client = client;
    this.#url = url;
    this.#options = options;
    this.#connect = connect;
    client.once('close', () => {
      this.#closed = true;
    });
    // Before the handover nobody listens: a refused or lost connection closes, and the session connects anew
    // and reports its own errors.
    client.on('error', () => undefined);
  }

  /** Opens the connection the config text `source` of the file `path` describes, or null if it cannot tell. */
  static async open(source: string, path: string): Promise<EarlyConnection | null> {
    // mqtt.js loads while the config is parsed: its files are read meanwhile.
    const [settings, { connect }] = await Promise.all([brokerSettings(source, path), import('mqtt')]);
    if (!settings) return null;
    const options = sessionClientOptions({ ...settings, now: Date.now });
    try {
      return new EarlyConnection(connect(settings.url, options), settings.url, options, connect);
    } catch {
      return null;
    }
  }

  /**
   * Resolves once the connection is made at the transport level (the CONNECT packet is then written), or it
   * closed, or after `maxWaitMs`: a round trip to the broker at most. Without this wait, the module loading that
   * follows would hold the written CONNECT back by tens of milliseconds.
   */
  async transportOpen(maxWaitMs: number): Promise<void> {
    const client = this.#client;
    if (!client || this.#closed) return;
    const stream = client.stream as NodeJS.EventEmitter | undefined;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, maxWaitMs);
      function done() {
        clearTimeout(timer);
        stream?.off('connect', done);
        client?.off('close', done);
        resolve();
      }
      stream?.once('connect', done);
      client.once('close', done);
    });
  }

  /** The session's `connect`: the open connection if made with the same settings, else a new one. */
  readonly connect: Connect = (url, options) => {
    const client = this.#client;
    this.#client = null;
    if (client && !this.#closed && url === this.#url && sameAccount(options, this.#options)) return client;
    if (client) end(client);
    return this.#connect(url, options);
  };

  /** Ends the connection if the session never took it over (a start that failed). */
  close(): void {
    if (this.#client) end(this.#client);
    this.#client = null;
  }
}

/**
 * Connected: with a DISCONNECT, so that the broker does not publish the will. Still connecting: the socket is
 * closed, since mqtt.js would hold the DISCONNECT until a CONNACK; the will, if the broker had taken the CONNECT,
 * says offline, which the device then is.
 */
function end(client: MqttClient): void {
  client.end(!client.connected);
}

function sameAccount(a: IClientOptions, b: IClientOptions): boolean {
  return (
    a.clientId === b.clientId &&
    a.username === b.username &&
    a.password === b.password &&
    a.keepalive === b.keepalive &&
    a.will?.topic === b.will?.topic &&
    a.ca === b.ca
  );
}

interface BrokerSettings {
  url: string;
  deviceId: string;
  username: string;
  password: string;
  keepaliveS: number;
  topicPrefix: string;
  ca: string | undefined;
}

/** The broker part of the config, read as the schema would; null when anything of it looks wrong. */
async function brokerSettings(source: string, path: string): Promise<BrokerSettings | null> {
  let raw: unknown;
  try {
    // The YAML parser is loaded only for a YAML file.
    raw = extname(path).toLowerCase() === '.json' ? JSON.parse(source) : (await import('yaml')).parse(source);
  } catch {
    return null;
  }
  const config = raw as {
    device_id?: unknown;
    topic_prefix?: unknown;
    mqtt?: {
      url?: unknown;
      username?: unknown;
      password?: unknown;
      keepalive_s?: unknown;
      ca_file?: unknown;
      insecure?: unknown;
    };
  } | null;
  const mqtt = config?.mqtt;
  const keepalive = mqtt?.keepalive_s ?? DEFAULT_KEEPALIVE_S;
  if (
    typeof config?.device_id !== 'string' ||
    !isDeviceId(config.device_id) ||
    typeof config.topic_prefix !== 'string' ||
    !TOPIC_PREFIX_PATTERN.test(config.topic_prefix) ||
    typeof mqtt?.url !== 'string' ||
    !PROTOCOLS.has(protocolOf(mqtt.url)) ||
    typeof mqtt.username !== 'string' ||
    typeof mqtt.password !== 'string' ||
    typeof keepalive !== 'number' ||
    // Never the password in the clear before the config's own check refuses it.
    (mqtt.insecure !== true && plainRemoteUrl(mqtt.url) !== undefined)
  ) {
    return null;
  }
  const ca = caOf(mqtt.ca_file, path);
  if (ca === null) return null;
  return {
    url: mqtt.url,
    deviceId: config.device_id,
    username: mqtt.username,
    password: mqtt.password,
    keepaliveS: keepalive,
    topicPrefix: config.topic_prefix,
    ca,
  };
}

/** The CA of `mqtt.ca_file`, relative to the config's folder as the config reads it; null when unusable. */
function caOf(file: unknown, configPath: string): string | undefined | null {
  if (file === undefined) return undefined;
  if (typeof file !== 'string' || file === '') return null;
  try {
    return readCaBundle(resolve(dirname(resolve(configPath)), file));
  } catch {
    return null;
  }
}

function protocolOf(url: string): string {
  try {
    return new URL(url).protocol;
  } catch {
    return '';
  }
}
