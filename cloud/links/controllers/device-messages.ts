import { positionBundleSchema } from '../../../shared/protocol/positions.js';
import { type DeviceChannel, parseDeviceTopic } from '../../../shared/protocol/topics.js';
import type { CloudContext } from '../../foundation/context.js';
import { databaseOutage } from '../../foundation/db/database-outage.js';
import { DeviceStates } from '../../rules/devices/device-states.js';
import { AckJournal } from '../../rules/journal/ack-journal.js';
import { PositionReports } from '../../rules/positions/position-reports.js';
import { UpdateDelivery } from '../../rules/rollouts/update-delivery.js';
import type { CommandWaiters } from './command-waiters.js';
import { DeviceKeys } from './device-keys.js';
import { ackHandler } from './handlers/ack.js';
import type { DeviceMessageContext, DeviceMessageHandler } from './handlers/handler.js';
import { positionHandler } from './handlers/position.js';
import { stateHandler } from './handlers/state.js';
import { telemetryHandler } from './handlers/telemetry.js';
import type { DeviceMessage } from './transport.js';

/** Larger payloads are dropped unread; the biggest legitimate one (a state with 32 objects) is far smaller. */
const MAX_PAYLOAD_BYTES = 16 * 1024;

/**
 * Routes what devices publish to one handler per channel. Messages of one device are handled one after
 * another, in the order the broker delivered them, so a will's "offline" never overtakes the "online" that
 * preceded it; different devices proceed in parallel.
 */
export class DeviceMessages {
  readonly #deps: DeviceMessageContext;
  readonly #queues = new Map<string, Promise<void>>();
  /** Position reports being checked and handed on, per device, each after the messages that came before it. */
  readonly #positions = new Map<string, Promise<void>>();

  /** `updates`: by default one that never sends (suites of the messages alone). */
  constructor(
    ctx: CloudContext,
    waiters: CommandWaiters,
    updates = new UpdateDelivery(ctx, () => ({ sendUpdate: async () => false })),
  ) {
    this.#deps = {
      ctx,
      waiters,
      updates,
      keys: new DeviceKeys(ctx),
      acks: new AckJournal(ctx),
      positions: new PositionReports(ctx),
      states: new DeviceStates(ctx.db, ctx.clock),
    };
  }

  /**
   * Takes one message from the transport. Resolves once it is handled, or dropped as invalid (sending it
   * again would not help); rejects, after logging, when handling it failed and it should come again. A position
   * report resolves once taken, and is applied in the background (`idle()` waits for it).
   */
  readonly receive = (message: DeviceMessage): Promise<void> => {
    const { log, config } = this.#deps.ctx;
    const target = parseDeviceTopic(config.topicPrefix, message.topic);
    if (!target) {
      log.warn({ topic: message.topic }, 'dropped a message on a topic that is not a device topic');
      return DROPPED;
    }
    const { deviceId, channel } = target;
    // Only `state` is retained on purpose; a stored ack or report would be an old one replayed at us.
    if (message.retain && channel !== 'state') {
      log.warn({ deviceId, channel }, 'dropped a retained message on a channel that is never retained');
      return DROPPED;
    }
    if (message.payload.length > MAX_PAYLOAD_BYTES) {
      log.warn({ deviceId, channel, bytes: message.payload.length }, 'dropped an oversized message');
      return DROPPED;
    }
    let body: unknown;
    try {
      body = JSON.parse(message.payload.toString('utf8'));
    } catch {
      log.warn({ deviceId, channel }, 'dropped a message that is not JSON');
      return DROPPED;
    }
    if (channel === 'ack' && typeOf(body) === 'position') return this.#acceptPosition(deviceId, body);
    if (channel === 'ack' && typeOf(body) === 'positions') return this.#acceptPositions(deviceId, body);
    return this.#enqueue(deviceId, () => this.#handle(channel, deviceId, body));
  };

  /**
   * Several reports in one message (shared/protocol/positions.ts): each taken as if it had come alone, in the
   * order they are listed. The envelope must name the device of its topic; what is in it is each report's own
   * business, checked as every report is.
   */
  #acceptPositions(deviceId: string, body: unknown): Promise<void> {
    const parsed = positionBundleSchema.safeParse(body);
    if (!parsed.success || parsed.data.device_id !== deviceId) {
      const { ctx } = this.#deps;
      ctx.log.warn({ deviceId, named: parsed.data?.device_id }, 'dropped a message of position reports');
      ctx.metrics.positionReport(parsed.success ? 'foreign' : 'malformed');
      return DROPPED;
    }
    for (const report of parsed.data.reports) void this.#acceptPosition(deviceId, report);
    return DROPPED;
  }

  /**
   * A position report is taken at once and handed on after every message of its device received before it (so
   * after the acknowledgement of the opening that moved the gate), but nothing received after it waits for it:
   * a broker hands a controller's packets over one after another, and applying a report must not hold up the
   * acknowledgement of the controller's next opening (docs/design.md section 7.5). Reports of a device are handed
   * on in the order received, and applied in that order with others in one statement
   * (cloud/rules/positions/position-reports.ts). A report lost to a failure here loses a step at most; the
   * position comes again with the controller's next connect.
   */
  #acceptPosition(deviceId: string, body: unknown): Promise<void> {
    const before = Promise.all([this.#queues.get(deviceId), this.#positions.get(deviceId)]);
    const next = before
      .then(() => this.#checked(positionHandler, deviceId, body))
      .catch((error: unknown) => {
        if (databaseOutage(this.#deps.ctx).failed(error, 'position report')) return;
        this.#deps.ctx.log.error({ deviceId, err: error }, 'applying a position report failed');
      });
    this.#positions.set(deviceId, next);
    void next.then(() => {
      if (this.#positions.get(deviceId) === next) this.#positions.delete(deviceId);
    });
    return DROPPED;
  }

  /** Resolves once every message received so far has been handled, position reports applied. */
  async idle(): Promise<void> {
    do {
      while (this.#queues.size > 0 || this.#positions.size > 0) {
        await Promise.all([...this.#queues.values(), ...this.#positions.values()]);
      }
      await this.#deps.positions.settled();
    } while (this.#queues.size > 0 || this.#positions.size > 0);
  }

  #handle(channel: DeviceChannel, deviceId: string, body: unknown): Promise<void> {
    switch (channel) {
      case 'ack':
        return this.#checked(ackHandler, deviceId, body);
      case 'state':
        return this.#checked(stateHandler, deviceId, body);
      case 'telemetry':
        return this.#checked(telemetryHandler, deviceId, body);
      case 'cmd':
        // The cloud never subscribes to commands; a device cannot publish them.
        this.#deps.ctx.log.warn({ deviceId }, 'dropped a command seen coming back');
        return DROPPED;
      default:
        return unreachable(channel);
    }
  }

  /** Every kind's prologue, once: the message passes its schema and names the device of its topic. */
  #checked<T extends { device_id: string }>(
    handler: DeviceMessageHandler<T>,
    deviceId: string,
    body: unknown,
  ): Promise<void> {
    const { log } = this.#deps.ctx;
    const parsed = handler.schema.safeParse(body);
    if (!parsed.success) {
      log.warn({ deviceId, issues: parsed.error.issues.length }, handler.malformed);
      handler.dropped?.(this.#deps.ctx, 'malformed');
      return DROPPED;
    }
    if (parsed.data.device_id !== deviceId) {
      log.warn({ deviceId, named: parsed.data.device_id }, handler.foreign);
      handler.dropped?.(this.#deps.ctx, 'foreign');
      return DROPPED;
    }
    return handler.handle(this.#deps, deviceId, parsed.data);
  }

  /** Runs `work` after the device's earlier messages; a failure is logged and handed back, not passed on. */
  #enqueue(deviceId: string, work: () => Promise<void>): Promise<void> {
    const previous = this.#queues.get(deviceId) ?? Promise.resolve();
    const handled = previous.then(work);
    const next = handled.catch((error: unknown) => {
      // A database out of reach is logged once per outage, not once per message of every controller.
      if (databaseOutage(this.#deps.ctx).failed(error, 'device message')) return;
      this.#deps.ctx.log.error({ deviceId, err: error }, 'handling a device message failed');
    });
    this.#queues.set(deviceId, next);
    void next.then(() => {
      if (this.#queues.get(deviceId) === next) this.#queues.delete(deviceId);
    });
    return handled;
  }
}

const DROPPED = Promise.resolve();

/** A message's `type`: position reports have one, acknowledgements none. */
function typeOf(body: unknown): unknown {
  return typeof body === 'object' && body !== null ? (body as { type?: unknown }).type : undefined;
}

function unreachable(value: never): never {
  throw new Error(`unexpected device channel ${String(value)}`);
}
