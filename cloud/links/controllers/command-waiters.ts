import type { Ack } from '../../../shared/protocol/messages.js';

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
  /** The journal writes of acks handed to a waiting dispatch, until it takes them (`journalWritten`). */
  readonly #writes = new Map<string, Promise<unknown>>();

  /** Resolves with the ack, or null when none came within `timeoutMs` (or the broker stopped). */
  wait(commandId: string, deviceId: string, timeoutMs: number): Promise<Ack | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#finish(commandId, null), timeoutMs);
      this.#pending.set(commandId, { deviceId, resolve, timer });
    });
  }

  /**
   * Hands a verified ack to the dispatch waiting for it, if it is this instance's and from its device, with
   * `written`, the ack's journal write, which settles once the journal holds it (or failed to).
   */
  settle(ack: Ack, written: Promise<unknown>): void {
    if (this.#pending.get(ack.command_id)?.deviceId !== ack.device_id) return;
    this.#writes.set(ack.command_id, written);
    // Gone once written, whether or not the dispatch took it: nothing is left to wait for.
    const forget = () => {
      if (this.#writes.get(ack.command_id) === written) this.#writes.delete(ack.command_id);
    };
    written.then(forget, forget);
    this.#finish(ack.command_id, ack);
  }

  /** The journal write of the ack a dispatch received, once, for its caller to wait on (docs/design.md 6). */
  journalWritten(commandId: string): Promise<unknown> | undefined {
    const written = this.#writes.get(commandId);
    this.#writes.delete(commandId);
    return written;
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
