import type { IClientOptions } from 'mqtt';
import type { DeviceState } from '../../shared/protocol/messages.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import { PROTOCOL_VERSION } from '../../shared/protocol/version.js';

/** What the controller's MQTT client is made from: the config's broker account and the device's topics. */
export interface SessionClientSettings {
  deviceId: string;
  username: string;
  password: string;
  keepaliveS: number;
  topicPrefix: string;
  now: () => number;
  /** The CA certificates (PEM) that sign the broker's certificate; unset, the system's trust store. */
  ca?: string;
}

/**
 * The mqtt.js options of the controller's session (./session.ts): the device itself as client id, a clean
 * session, no reconnection of mqtt.js's own (the session retries with its own delays) and a will that marks the
 * device offline. In a file without the payload schemas, so that the daemon can open its connection before it
 * loads them (./early-connection.ts).
 */
export function sessionClientOptions(settings: SessionClientSettings): IClientOptions {
  const offline: DeviceState = {
    v: PROTOCOL_VERSION,
    device_id: settings.deviceId,
    online: false,
    at: settings.now(),
  };
  return {
    // TLS (mqtts://, wss://) always verifies the broker: against `ca` when given. mqtt.js names the host it
    // connects to as the TLS server name (./session.ts keeps it right for each node of a cluster).
    ...(settings.ca === undefined ? {} : { ca: settings.ca }),
    rejectUnauthorized: true,
    clientId: settings.deviceId,
    username: settings.username,
    password: settings.password,
    clean: true,
    keepalive: settings.keepaliveS,
    reconnectPeriod: 0,
    resubscribe: false,
    connectTimeout: 10_000,
    will: {
      topic: deviceTopic(settings.topicPrefix, settings.deviceId, 'state'),
      payload: Buffer.from(JSON.stringify(offline)),
      qos: 1,
      retain: true,
    },
  };
}
