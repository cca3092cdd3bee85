import { PROTOCOL_VERSION, type Telemetry } from '../../shared/protocol/messages.js';
import type { Publisher } from './outbox.js';

export interface TelemetryOptions {
  publisher: Publisher;
  /** The device's `telemetry` topic. */
  topic: string;
  deviceId: string;
  version: string;
  intervalMs: number;
  now: () => number;
  /** When the daemon started (Unix ms), for the uptime. */
  startedAt: number;
  signal: () => number | null;
  clockSynced: () => boolean;
  outboxSize: () => number;
  /**
   * The phone's battery and network, for a controller with phone objects only (docs/design.md section 12.6);
   * absent otherwise, and so are the fields.
   */
  phone?: () => Promise<{ battery?: Telemetry['battery']; network?: Telemetry['network'] }>;
  log?: (line: string) => void;
}

/**
 * Periodic health on the `telemetry` topic (docs/design.md section 7): uptime, version, GSM signal, clock sync,
 * the number of acknowledgements waiting and, on a phone, its battery and network. Sent at QoS 0 and only while connected: a stale reading is of no
 * use later. Also sent right after each connect (call `publishNow`).
 */
export class TelemetryReporter {
  readonly #options: TelemetryOptions;
  #timer: ReturnType<typeof setInterval> | null = null;

  constructor(options: TelemetryOptions) {
    this.#options = options;
  }

  async reading(): Promise<Telemetry> {
    const o = this.#options;
    const phone = o.phone ? await o.phone() : {};
    const now = o.now();
    return {
      v: PROTOCOL_VERSION,
      device_id: o.deviceId,
      at: now,
      uptime_s: Math.max(0, Math.floor((now - o.startedAt) / 1000)),
      version: o.version,
      signal: o.signal(),
      clock_synced: o.clockSynced(),
      outbox: o.outboxSize(),
      ...phone,
    };
  }

  async start(): Promise<void> {
    this.#timer = setInterval(() => void this.publishNow(), this.#options.intervalMs);
    this.#timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  async publishNow(): Promise<void> {
    const o = this.#options;
    if (!o.publisher.connected) return;
    const reading = await this.reading();
    await o.publisher
      .publish(o.topic, JSON.stringify(reading), { qos: 0 })
      .catch((error: Error) => o.log?.(`telemetry: not sent: ${error.message}`));
  }
}
