/**
 * Device accounts on an external broker, made at provisioning (docs/design.md section 7.1): Mosquitto's dynamic
 * security plugin (./dynamic-security.ts) or a RabbitMQ cluster's management API (./rabbitmq-accounts.ts). Both
 * give a device the rights of ./device-access.ts and nothing else.
 */
export interface DeviceAccounts {
  /** Topics the cloud subscribes to for the answers of account changes (none when they come another way). */
  readonly answerTopics: readonly string[];
  /** Takes a message from one of `answerTopics`; false when the topic is not one of them. */
  receive(topic: string, payload: Buffer): boolean;
  /** Creates or replaces the device's account; a session opened with former credentials ends. */
  put(deviceId: string, password: string): Promise<void>;
  /** Deletes the device's account and ends its session. */
  remove(deviceId: string): Promise<void>;
}
