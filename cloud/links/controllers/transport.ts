/** One message a device published, as the broker handed it to the cloud. */
export interface DeviceMessage {
  topic: string;
  payload: Buffer;
  /** Set when the broker delivered a stored retained message (on subscribing), not a live one. */
  retain: boolean;
}

/**
 * Hands one device message to the cloud. Resolves once the cloud has handled it (an ack: once the journal holds
 * it), or dropped it as invalid, since sending it again would not help. Rejects only when handling it failed for a
 * reason that may pass (the database, an internal error): the message must then reach the listener again.
 */
export type DeviceMessageListener = (message: DeviceMessage) => Promise<void>;

/**
 * What carries messages between the cloud and the devices: the embedded aedes or an external broker.
 * The link on top of it (./link-broker.ts) is the same for both, so both behave alike; one contract suite
 * (test/cloud/transport-contract.test.ts) holds both to the promises below.
 *
 * The acknowledgement promise: a QoS 1 message a device publishes is kept (by the device until it has its PUBACK,
 * or by the broker for the cloud's session) until the listener resolved for it. When the listener rejects, the
 * same message reaches the listener again later, and a device's messages reach it in the order it sent them. So
 * an ack is never lost between the controller's disk and the journal (cloud/README.md, "Opening").
 * - Embedded (./embedded-access.ts): the broker is the cloud, so the PUBACK to the device waits for the
 *   listener; a rejection refuses the publish and closes the connection, and the controller, which keeps the
 *   ack on its disk until it has a PUBACK, sends it again once reconnected. aedes reads a client's next packet
 *   only after answering its publish, so a device's messages are taken in order.
 * - External (./external-delivery.ts): Mosquitto acknowledges the device at once and keeps the message in the
 *   cloud's persistent session; the cloud's PUBACK waits for the listener, and a rejection drops the
 *   connection without it, so that the broker sends the message again when the session resumes after a
 *   back-off [MQTT-4.4.0-1].
 */
export interface BrokerTransport {
  /** The URL a device should use to reach the broker. */
  readonly deviceUrl: string;
  /** Whether the device has a session now (embedded: a connected client; external: its reported state). */
  isConnected(deviceId: string): Promise<boolean>;
  /** How many devices have a session now, told the way `isConnected` tells one. */
  connectedDevices(): Promise<number>;
  /**
   * Whether devices can reach the cloud through it now (embedded: it listens; external: the cloud's own session
   * is connected). What readiness asks (docs/design.md section 8.1).
   */
  linked(): boolean;
  /**
   * Publishes QoS 1, never retained. Rejects with NotConnectedError when the cloud has no broker session
   * (external: lost and not regained yet; both: once stopped).
   */
  publish(topic: string, payload: Buffer): Promise<void>;
  /** Creates or replaces the device's account; any session opened with former credentials ends. */
  addDevice(deviceId: string, password: string): Promise<void>;
  /** Removes the device's account and ends its session. */
  removeDevice(deviceId: string): Promise<void>;
  /** Stops delivering messages and closes every connection it holds (embedded: the devices'; external: its own). */
  stop(): Promise<void>;
}

export class NotConnectedError extends Error {
  override name = 'NotConnectedError';
}
