import type { DeviceMessage, DeviceMessageListener } from '../../cloud/links/controllers/transport.js';

interface Refusal {
  matches: (message: DeviceMessage) => boolean;
  left: number;
}

/**
 * Stands in front of the cloud's own listener: records every message a transport hands it, and rejects the ones
 * a test chose to refuse, as the cloud's listener does when the journal cannot take an ack (the database is
 * down). Everything else goes on to the cloud's listener.
 */
export class RefusingListener {
  /** Every message handed over, refused ones included, in the order handed. */
  readonly handed: DeviceMessage[] = [];
  /** The messages the cloud's listener took, in the order it took them. */
  readonly taken: DeviceMessage[] = [];
  readonly #next: DeviceMessageListener;
  readonly #refusals: Refusal[] = [];

  constructor(next: DeviceMessageListener) {
    this.#next = next;
  }

  /** Rejects the next `times` messages that match, without passing them on. */
  refuse(matches: (message: DeviceMessage) => boolean, times = 1): void {
    this.#refusals.push({ matches, left: times });
  }

  readonly receive: DeviceMessageListener = async (message) => {
    this.handed.push(message);
    const refusal = this.#refusals.find((candidate) => candidate.left > 0 && candidate.matches(message));
    if (refusal) {
      refusal.left--;
      throw new Error('refused, as when the journal cannot take a message');
    }
    await this.#next(message);
    this.taken.push(message);
  };
}
