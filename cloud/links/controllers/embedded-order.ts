import type { Client, PublishPacket } from 'aedes';
import type { AcceptPublish } from './embedded-access.js';

/**
 * Takes the publishes of each embedded broker connection one after another. aedes hands over every packet of a
 * socket read at once, so without this a device's later messages would be handled while an earlier one is still
 * being handled, or after it was refused. Once one is refused, the connection's later ones are refused unread:
 * aedes closes the connection, and the device sends them all again, the refused one first
 * (cloud/links/controllers/transport.ts, the acknowledgement promise).
 */
export class PublishOrder {
  readonly #accept: AcceptPublish;
  /** Per connection: whether its last publish was taken, once that is known. */
  readonly #last = new WeakMap<Client, Promise<boolean>>();

  constructor(accept: AcceptPublish) {
    this.#accept = accept;
  }

  /** Resolves true once the cloud took the publish, false when it was refused (now or before it). */
  take(client: Client | null, packet: PublishPacket): Promise<boolean> {
    // A will is published by aedes after its client is gone, once: nothing to keep it in order with.
    if (!client) return this.#attempt(packet);
    const previous = this.#last.get(client) ?? Promise.resolve(true);
    const taken = previous.then((ok) => (ok ? this.#attempt(packet) : false));
    this.#last.set(client, taken);
    return taken;
  }

  #attempt(packet: PublishPacket): Promise<boolean> {
    return this.#accept(packet).then(
      () => true,
      () => false,
    );
  }
}
