/** One message a device published, as the broker handed it to the cloud. */
export interface DeviceMessage {
  topic: string;
  payload: Buffer;
  /** Set when the broker delivered a stored retained message (on subscribing), not a live one. */
  retain: boolean;
}

/**
 * Hands one device message to the cloud. Resolves once the cloud has handled it (an ack: once the journal holds
 * it); rejects when it could not, and the embedded broker then refuses the publish, so that the device keeps
 * the message and sends it again after reconnecting.
 */
export type DeviceMessageListener = (message: DeviceMessage) => Promise<void>;

/**
 * What carries messages between the cloud and the devices: the embedded aedes or an external broker.
 * The link on top of it (./link-broker.ts) is the same for both, so both behave alike.
 */
export interface BrokerTransport {
  /** The URL a device should use to reach the broker. */
  readonly deviceUrl: string;
  /** Whether the device has a session now (embedded: a connected client; external: its reported state). */
  isConnected(deviceId: string): Promise<boolean>;
  /** Publishes QoS 1, never retained. Rejects with NotConnectedError when the cloud has no broker session. */
  publish(topic: string, payload: Buffer): Promise<void>;
  /** Creates or replaces the device's account; any session opened with former credentials ends. */
  addDevice(deviceId: string, password: string): Promise<void>;
  /** Removes the device's account and ends its session. */
  removeDevice(deviceId: string): Promise<void>;
  /** Stops delivering messages and closes every connection. */
  stop(): Promise<void>;
}

export class NotConnectedError extends Error {
  override name = 'NotConnectedError';
}
