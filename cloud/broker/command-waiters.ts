import type { Ack } from '../../shared/protocol/messages.js';

interface Waiter {
  deviceId: string;
  resolve(ack: Ack | null): void;
  timer: NodeJS.Timeout;
}

/**
 * Dispatches waiting for their acknowledgement, by command id. Only this instance's own dispatches wait
 * here; an ack for a command another instance sent finds no waiter and only reaches the journal.
 */
export class CommandWaiters {
  readonly #pending = new Map<string, Waiter>();

  /** Resolves with the ack, or null when none came within `timeoutMs` (or the broker stopped). */
  wait(commandId: string, deviceId: string, timeoutMs: number): Promise<Ack | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#finish(commandId, null), timeoutMs);
      this.#pending.set(commandId, { deviceId, resolve, timer });
    });
  }

  /** Hands a verified ack to the dispatch waiting for it, if it is this instance's and from its device. */
  settle(ack: Ack): void {
    if (this.#pending.get(ack.command_id)?.deviceId !== ack.device_id) return;
    this.#finish(ack.command_id, ack);
  }

  cancel(commandId: string): void {
    this.#finish(commandId, null);
  }

  cancelAll(): void {
    for (const commandId of [...this.#pending.keys()]) this.#finish(commandId, null);
  }

  #finish(commandId: string, ack: Ack | null): void {
    const waiter = this.#pending.get(commandId);
    if (!waiter) return;
    this.#pending.delete(commandId);
    clearTimeout(waiter.timer);
    waiter.resolve(ack);
  }
}
