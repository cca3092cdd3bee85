import { randomUUID } from 'node:crypto';
import type { Command } from '../../../shared/protocol/messages.js';
import { type Position, signPositionReport } from '../../../shared/protocol/positions.js';
import { signAck } from '../../../shared/protocol/signing.js';
import { deviceTopic } from '../../../shared/protocol/topics.js';
import { PROTOCOL_VERSION } from '../../../shared/protocol/version.js';
import type { CloudContext } from '../../foundation/context.js';
import { type SandboxBarrier, sandboxBarrier } from '../../rules/sandbox/sandbox-world.js';
import type { DeviceMessageListener } from './transport.js';

/** When the sandbox gate is seen open after its relay fired, and closed after it opened. */
export interface SandboxGateTimes {
  opensAfterMs: number;
  closesAfterMs: number;
}

/** As the demo's gate moves (cloud/demo/controller.ts), a little quicker: a developer watches it. */
export const SANDBOX_GATE_TIMES: SandboxGateTimes = { opensAfterMs: 1500, closesAfterMs: 10_000 };

/**
 * The controller of each sandbox barrier (docs/design.md section 11.9), run by the cloud itself. It answers a
 * command as a controller would, with an acknowledgement signed by the barrier's own key, and reports the gate's
 * moves signed likewise; both go into the cloud through the very path a controller's messages take from the
 * broker (`receive`), so the checks, the journal, its receipts and the events are the live ones. What the next
 * openings come to is the sandbox's outcome: `opened` (the gate opens, then closes), `offline` (nothing is sent),
 * `busy` (refused), `gate_not_moved` (the relay fires, the gate never moves).
 */
export class SandboxController {
  readonly #ctx: CloudContext;
  readonly #receive: DeviceMessageListener;
  readonly #times: SandboxGateTimes;
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(
    ctx: CloudContext,
    receive: DeviceMessageListener,
    times: SandboxGateTimes = SANDBOX_GATE_TIMES,
  ) {
    this.#ctx = ctx;
    this.#receive = receive;
    this.#times = times;
  }

  /** The sandbox barrier of a device without a session, or null for a real controller that is offline. */
  barrier(deviceId: string): Promise<SandboxBarrier | null> {
    return sandboxBarrier(this.#ctx, deviceId);
  }

  /** Answers `command` as `barrier`'s controller, unless its outcome is `offline` (the caller's to say). */
  async answer(command: Command, barrier: SandboxBarrier): Promise<void> {
    const now = this.#ctx.clock.now().getTime();
    const busy = barrier.outcome === 'busy';
    const ack = signAck(barrier.key, {
      v: PROTOCOL_VERSION,
      command_id: command.id,
      device_id: barrier.deviceId,
      outcome: busy ? 'refused' : 'opened',
      ...(busy ? { reason: 'busy' as const } : {}),
      received_at: now,
      finished_at: now,
    });
    await this.#send(barrier.deviceId, ack);
    if (barrier.outcome !== 'opened') return;
    // Dated by the moves' own times after the relay fired, so that the journal reads the same whatever the clock.
    const opensAt = now + this.#times.opensAfterMs;
    this.#later(this.#times.opensAfterMs, async () => {
      await this.#report(barrier, command.object, 'open', opensAt);
      this.#later(this.#times.closesAfterMs, () =>
        this.#report(barrier, command.object, 'closed', opensAt + this.#times.closesAfterMs),
      );
    });
  }

  /** Forgets the moves not made yet: a stopping cloud leaves its sandbox gates where they are. */
  stop(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  #later(ms: number, step: () => Promise<void>): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      step().catch((error: unknown) =>
        this.#ctx.log.warn({ err: error }, 'the sandbox gate could not report its move'),
      );
    }, ms);
    timer.unref();
    this.#timers.add(timer);
  }

  #report(barrier: SandboxBarrier, object: string, position: Position, changedAt: number): Promise<void> {
    const report = signPositionReport(barrier.key, {
      v: PROTOCOL_VERSION,
      type: 'position',
      id: randomUUID(),
      device_id: barrier.deviceId,
      object,
      position,
      changed_at: changedAt,
      at: Math.max(changedAt, this.#ctx.clock.now().getTime()),
    });
    return this.#send(barrier.deviceId, report);
  }

  #send(deviceId: string, message: object): Promise<void> {
    return this.#receive({
      topic: deviceTopic(this.#ctx.config.topicPrefix, deviceId, 'ack'),
      payload: Buffer.from(JSON.stringify(message)),
      retain: false,
    });
  }
}
