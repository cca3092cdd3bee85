import type { Ack } from '../../shared/protocol/messages.js';

/**
 * What the open flow needs from the controller link, whatever carries it (embedded or external broker).
 * The implementation signs the command, publishes it, and waits for the controller's verified ack.
 */
export interface CommandDispatcher {
  dispatch(command: DispatchRequest): Promise<DispatchResult>;
}

export interface DispatchRequest {
  commandId: string;
  deviceId: string;
  /** The object's local id in the controller's config. */
  object: string;
  numberId: number;
}

export type DispatchResult =
  /**
   * A verified ack. Its handler completes the journal entry as this answer goes out, and the broker holds
   * the ack until then (cloud/broker/handlers/ack.ts).
   */
  | { kind: 'acked'; ack: Ack }
  /** The controller has no session with the broker: nothing was sent, nothing queued. */
  | { kind: 'offline' }
  /** No acknowledgement within the deadline; a late one still reaches the journal. */
  | { kind: 'timeout' };

/** Commands live a few seconds: a gate must never open long after the company asked. */
export const COMMAND_LIFETIME_MS = 10_000;
/** How long `open` waits for the acknowledgement before answering 504 (decisions.md section 4). */
export const ACK_TIMEOUT_MS = 8_000;
