import type { DoneCallback, IPublishPacket, MqttClient } from 'mqtt';
import type { CloudContext } from '../../foundation/context.js';
import { RedeliveryBackoff, type RedeliveryDelays } from './redelivery-backoff.js';
import type { DeviceMessageListener } from './transport.js';

export interface ExternalDeliveryOptions {
  onMessage: DeviceMessageListener;
  /** Takes a message meant for the transport itself (an answer of the dynamic security plugin); false if not one. */
  control: (topic: string, payload: Buffer) => boolean;
  delays: RedeliveryDelays;
  /** How soon to reconnect after an ordinary loss of the broker. */
  reconnectPeriodMs: number;
}

/** Handed to mqtt.js for a message whose PUBACK must not be sent. */
const REFUSED = new Error('the cloud did not take this message');

/**
 * How messages from the external broker reach the listener while keeping the acknowledgement promise of
 * ./transport.ts: the PUBACK of a message is sent only once the listener resolved.
 *
 * mqtt.js calls `handleMessage` for every PUBLISH it receives, sends the PUBACK of a QoS 1 message when its
 * callback is called without an error, sends none when it is called with one, and reads the next packet only
 * after the callback: messages are handled one at a time, in the order the broker sent them, and their PUBACKs
 * leave in that order [MQTT-4.6.0-2]. (`customHandleAcks`
 * would do no better: mqtt.js uses it with MQTT 5 only, and a PUBACK with an error reason code ends the
 * message's flow as surely as a success, so the broker would not send it again.)
 *
 * When the listener rejects, no PUBACK is sent and the connection is dropped; the session (clean: false) keeps
 * the message, and when the cloud reconnects the broker sends every unacknowledged message again, with its
 * original packet identifier [MQTT-4.4.0-1] and in the original order [MQTT-4.6.0-1]. The messages received on
 * the dropped connection after the refused one are refused unread, so they come back behind it and a device's
 * messages are handled in the order it sent them. The reconnection waits a delay that doubles while refusals
 * follow each other (./redelivery-backoff.ts): only failures that may pass (the database, an internal error)
 * reject, so the message is sent again until it is taken, never dropped.
 */
export class ExternalDelivery {
  readonly #client: MqttClient;
  readonly #ctx: CloudContext;
  readonly #options: ExternalDeliveryOptions;
  readonly #backoff: RedeliveryBackoff;
  /** Set from a refusal until the next connection, and for good once stopping. */
  #refusing = false;
  #stopped = false;
  #current: Promise<void> = Promise.resolve();

  constructor(client: MqttClient, ctx: CloudContext, options: ExternalDeliveryOptions) {
    this.#client = client;
    this.#ctx = ctx;
    this.#options = options;
    this.#backoff = new RedeliveryBackoff(options.delays);
    // mqtt.js emits `connect` while handling the CONNACK, before any PUBLISH of the new connection.
    client.on('connect', () => {
      this.#refusing = this.#stopped;
    });
    client.handleMessage = (packet, callback) => this.#take(packet, callback);
  }

  /** Takes no more messages; resolves once the one being handled is done. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#refusing = true;
    await this.#current;
  }

  #take(packet: IPublishPacket, callback: DoneCallback): void {
    const { topic, qos, retain } = packet;
    const payload = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload;
    if (this.#options.control(topic, payload)) {
      callback();
      return;
    }
    if (this.#refusing) {
      callback(REFUSED);
      return;
    }
    this.#current = this.#options.onMessage({ topic, payload, retain }).then(
      () => {
        this.#taken();
        callback();
      },
      () => {
        // A QoS 0 message is never sent again: refusing it would only cost a reconnection.
        if (qos > 0 && !this.#stopped) this.#refuse(topic);
        callback(qos > 0 ? REFUSED : undefined);
      },
    );
  }

  #taken(): void {
    if (!this.#backoff.refusing) return;
    this.#backoff.reset();
    this.#client.options.reconnectPeriod = this.#options.reconnectPeriodMs;
  }

  /** Drops the connection without a PUBACK, to resume the session after the back-off delay. */
  #refuse(topic: string): void {
    this.#refusing = true;
    const delayMs = this.#backoff.nextDelayMs();
    // mqtt.js reads the period each time it schedules a reconnection.
    this.#client.options.reconnectPeriod = delayMs;
    this.#ctx.log.warn(
      { topic, delayMs },
      'the cloud could not take a device message; reconnecting so that the broker sends it again',
    );
    this.#client.stream.destroy();
  }
}
