import type { SigningKey } from '../../../shared/crypto/ed25519.js';
import { type Ack, type Command, PROTOCOL_VERSION } from '../../../shared/protocol/messages.js';
import { signCommand } from '../../../shared/protocol/signing.js';

/**
 * What the open flow needs from the controller link, whatever carries it (embedded or external broker): the
 * signed command for a request, then its delivery and the controller's verified ack. Signing is its own step so
 * that it can be done while the journal entry is being written (open.ts).
 */
export interface CommandDispatcher {
  /** The command for a request, signed with the cloud's command key; its lifetime starts now. */
  sign(request: DispatchRequest): Command;
  /** Sends a signed command to the device it names and waits for the acknowledgement. */
  send(command: Command): Promise<DispatchResult>;
  /**
   * After `send` answered `acked`: the ack's journal write (with its event), which settles once written or
   * failed; undefined where the journal is written before `send` answers.
   */
  journalWritten?(commandId: string): Promise<unknown> | undefined;
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
   * the ack until then (cloud/links/controllers/handlers/ack.ts).
   */
  | { kind: 'acked'; ack: Ack }
  /** The controller has no session with the broker: nothing was sent, nothing queued. */
  | { kind: 'offline' }
  /** No acknowledgement within the deadline; a late one still reaches the journal. */
  | { kind: 'timeout' };

/** Commands live a few seconds: a gate must never open long after the company asked. */
export const COMMAND_LIFETIME_MS = 10_000;

/** The `open` command for a request, signed with the service key, living from `issuedAt` (Unix ms). */
export function signOpenCommand(serviceKey: SigningKey, request: DispatchRequest, issuedAt: number): Command {
  return signCommand(serviceKey, {
    v: PROTOCOL_VERSION,
    id: request.commandId,
    device_id: request.deviceId,
    object: request.object,
    number_id: request.numberId,
    action: 'open',
    issued_at: issuedAt,
    expires_at: issuedAt + COMMAND_LIFETIME_MS,
  });
}
