import type { CommandDispatcher } from '../../rules/opening/dispatcher.js';
import type { UpdateDelivery, UpdateSender } from '../../rules/rollouts/update-delivery.js';

/**
 * The cloud's side of the controller link (docs/design.md section 7), embedded aedes or an external broker
 * behind the same face: it dispatches signed commands and waits for verified acks, applies every ack to the
 * journal once, keeps device state and telemetry, and manages device accounts on the broker.
 */
export interface ControllerLink extends CommandDispatcher, UpdateSender {
  /** Sends rollouts' update commands (docs/design.md section 12.4.2): at each tick of its job, and at once to a controller coming online. */
  readonly updates: UpdateDelivery;
  /** The URL a device should use to reach this broker (given to it at provisioning). */
  readonly deviceUrl: string;
  /** Creates or replaces the broker account of a device; the password is shown to the device once. */
  addDevice(deviceId: string, password: string): Promise<void>;
  /** Removes the account and ends any session of the device. */
  removeDevice(deviceId: string): Promise<void>;
  /** How many controllers have a session now (the gauge of docs/design.md section 8.1). */
  connectedControllers(): Promise<number>;
  /** Whether controllers can reach this instance now: what `/readyz` asks of the broker. */
  linked(): boolean;
  stop(): Promise<void>;
}
