import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SigningKey, VerifyKey } from '../../shared/crypto/ed25519.js';
import {
  type Ack,
  type AckReason,
  type Command,
  commandSchema,
  PROTOCOL_VERSION,
  type UnsignedAck,
} from '../../shared/protocol/messages.js';
import { signAck, verifyCommand } from '../../shared/protocol/signing.js';
import type { ObjectConfig } from '../config.js';
import { type Driver, type OpenOutcome, openSafely } from '../drivers/driver.js';
import type { ExecutedIds } from './executed.js';

/** What a handled command came to, for the status file and the log. */
export interface CommandResult {
  id: string;
  object: string;
  outcome: Ack['outcome'];
  reason?: AckReason;
  received_at: number;
  finished_at: number;
}

export interface CommandHandlerOptions {
  deviceId: string;
  /** The cloud's command key, pinned at provisioning. */
  commandKey: VerifyKey;
  /** The device's own key, which signs acknowledgements. */
  deviceKey: SigningKey;
  objects: readonly ObjectConfig[];
  driverFor: (object: ObjectConfig) => Driver;
  executed: ExecutedIds;
  clock: { readonly synced: boolean; readonly trustedSince: number | null };
  now: () => number;
  /** Stores the signed acknowledgement durably and sends it (the outbox). */
  deliver: (ack: Ack) => Promise<void>;
  onResult?: (result: CommandResult) => void;
  log?: (line: string) => void;
}

interface CheckContext {
  options: CommandHandlerOptions;
  command: Command;
  /** An update is switching releases. */
  held: boolean;
  received: number;
}

type Check = (context: CheckContext) => AckReason | null;

/**
 * The checks a command passes before anything moves, in this order (docs/design.md section 7). The first one that
 * fails is the refusal reason. Cheap, local facts first; the signature before anything that depends on the
 * command's content being the cloud's; the clock before the expiry that depends on it. `duplicate` catches a
 * repeat within this run, `stale` anything issued before it (which an earlier run may have executed).
 */
const CHECKS: readonly [string, Check][] = [
  [
    'wrong_device',
    ({ options, command }) => (command.device_id !== options.deviceId ? 'wrong_device' : null),
  ],
  [
    'bad_signature',
    ({ options, command }) => (verifyCommand(options.commandKey, command) ? null : 'bad_signature'),
  ],
  ['clock_unsynced', ({ options }) => (options.clock.synced ? null : 'clock_unsynced')],
  ['expired', ({ command, received }) => (received > command.expires_at ? 'expired' : null)],
  ['duplicate', ({ options, command }) => (options.executed.has(command.id) ? 'duplicate' : null)],
  [
    'stale',
    ({ options, command }) => {
      const since = options.clock.trustedSince;
      return since === null || command.issued_at < since ? 'stale' : null;
    },
  ],
  [
    'unknown_object',
    ({ options, command }) =>
      options.objects.some((o) => o.id === command.object) ? null : 'unknown_object',
  ],
  // An object mid-pulse is not busy: a command for it joins the pulse (CommandHandler.#join).
  ['busy', ({ held }) => (held ? 'busy' : null)],
];

/** An object's pulse under way: the command that started it, and what the driver's action came to. */
interface Pulse {
  commandId: string;
  outcome: Promise<OpenOutcome>;
}

/**
 * Turns commands from the `cmd` topic into driver actions and signed acknowledgements. Commands arrive at QoS 1,
 * so they may come twice or late: the command id and `expires_at` decide, never the delivery. Every refusal is
 * acknowledged with its reason; a payload that is not a command at all (no valid id to answer to) is logged and
 * dropped. At most one operation runs per object: a command for an object whose pulse is under way joins that
 * pulse (docs/design.md section 7), answered with its outcome and the id of the command that started it.
 */
export class CommandHandler {
  readonly #options: CommandHandlerOptions;
  /** The pulse under way on each object, by object id. */
  readonly #pulses = new Map<string, Pulse>();
  /** Executions in progress by command id, so that a copy arriving meanwhile is answered after the original. */
  readonly #running = new Map<string, Promise<void>>();
  /** Each object's openings in progress (its pulse's and those that joined it), until their acks are out. */
  readonly #openings = new Map<string, Set<Promise<void>>>();
  #accepting = true;
  /** While an update switches releases: openings are refused busy rather than started. */
  #held = false;

  constructor(options: CommandHandlerOptions) {
    this.#options = options;
  }

  /** Handles one payload from the `cmd` topic; resolves with the acknowledgement given (null when dropped). */
  async handle(payload: Buffer | string): Promise<Ack | null> {
    const o = this.#options;
    const received = o.now();
    const command = parseCommand(payload);
    if (!command) {
      o.log?.('command: dropped a payload that is not a valid command');
      return null;
    }
    if (!this.#accepting) return null;
    const context: CheckContext = { options: o, command, held: this.#held, received };
    for (const [, check] of CHECKS) {
      const reason = check(context);
      if (!reason) continue;
      if (reason === 'duplicate') await this.#running.get(command.id);
      return this.#acknowledge(command, { outcome: 'refused', reason }, received);
    }
    const pulse = this.#pulses.get(command.object);
    return pulse ? this.#join(command, pulse, received) : this.#execute(command, received);
  }

  /**
   * Holds new openings off (refused busy) and resolves once none runs: an update never starts while an output
   * moves (docs/design.md section 12.4.3).
   */
  async hold(): Promise<void> {
    this.#held = true;
    await Promise.allSettled(this.#running.values());
  }

  resume(): void {
    this.#held = false;
  }

  /**
   * Resolves once no opening of `object` is in progress, its acknowledgement put into the outbox: a position
   * report waits for it, so that it never overtakes the acknowledgement of the opening that moved the gate
   * (docs/design.md section 12.5).
   */
  async idle(object: string): Promise<void> {
    for (let under = this.#openings.get(object); under; under = this.#openings.get(object))
      await Promise.all(under);
  }

  /** Stops accepting commands and waits for the operations in progress (and their acknowledgements). */
  async stop(): Promise<void> {
    this.#accepting = false;
    await Promise.allSettled(this.#running.values());
  }

  async #execute(command: Command, received: number): Promise<Ack> {
    const o = this.#options;
    const object = o.objects.find((candidate) => candidate.id === command.object)!;
    const done = this.#begin(command);
    try {
      // Recorded before the driver acts, so that a copy arriving meanwhile is refused.
      o.executed.add(command.id, command.expires_at);
      const outcome = openSafely(o.driverFor(object), object);
      this.#pulses.set(object.id, { commandId: command.id, outcome });
      const result = await outcome;
      // The pulse is over: a command from now on starts the next one (while this one's ack goes out).
      this.#endPulse(object.id, command.id);
      if (result.outcome !== 'opened')
        o.log?.(`command ${command.id}: ${result.reason} ${result.detail ?? ''}`);
      return await this.#acknowledge(command, ackOf(result), received);
    } finally {
      this.#endPulse(object.id, command.id);
      done();
    }
  }

  /** Forgets the object's pulse if it is still the one `commandId` started, never a later one. */
  #endPulse(objectId: string, commandId: string): void {
    if (this.#pulses.get(objectId)?.commandId === commandId) this.#pulses.delete(objectId);
  }

  /**
   * A command for an object whose pulse is under way: the gate is already being opened, so rather than refuse
   * it `busy` (a courier at the gate told to try again while it opens) it shares that pulse's outcome, and its
   * acknowledgement names the command that started the pulse (`pulse`), so the journal shows two openings of one
   * pulse. It is recorded as executed, like any command that reached the driver.
   */
  async #join(command: Command, pulse: Pulse, received: number): Promise<Ack> {
    const o = this.#options;
    const done = this.#begin(command);
    try {
      o.executed.add(command.id, command.expires_at);
      o.log?.(`command ${command.id} (${command.object}): joins the pulse of ${pulse.commandId}`);
      const result = await pulse.outcome;
      return await this.#acknowledge(command, { ...ackOf(result), pulse: pulse.commandId }, received);
    } finally {
      done();
    }
  }

  /** Marks a command's opening in progress (by id, and on its object); the function returned ends it. */
  #begin(command: Command): () => void {
    let done!: () => void;
    const running = new Promise<void>((resolve) => {
      done = resolve;
    });
    this.#running.set(command.id, running);
    const openings = this.#openings.get(command.object) ?? new Set<Promise<void>>();
    openings.add(running);
    this.#openings.set(command.object, openings);
    return () => {
      this.#running.delete(command.id);
      openings.delete(running);
      if (openings.size === 0) this.#openings.delete(command.object);
      done();
    };
  }

  async #acknowledge(command: Command, result: AckResult, received: number): Promise<Ack> {
    const o = this.#options;
    const unsigned: UnsignedAck = {
      v: PROTOCOL_VERSION,
      command_id: command.id,
      device_id: o.deviceId,
      outcome: result.outcome,
      received_at: received,
      finished_at: o.now(),
    };
    if (result.reason) unsigned.reason = result.reason;
    if (result.pulse) unsigned.pulse = result.pulse;
    if (result.call) unsigned.call = result.call;
    const ack = signAck(o.deviceKey, unsigned);
    await o.deliver(ack);
    // The rest is bookkeeping, done on the next turn: the MQTT client writes the acknowledgement out only once
    // the promise callbacks queued now have run, and this one would otherwise go first.
    await nextTurn();
    o.onResult?.({
      id: command.id,
      object: command.object,
      outcome: ack.outcome,
      ...(ack.reason ? { reason: ack.reason } : {}),
      received_at: ack.received_at,
      finished_at: ack.finished_at,
    });
    o.log?.(`command ${command.id} (${command.object}): ${ack.outcome}${ack.reason ? ` ${ack.reason}` : ''}`);
    return ack;
  }
}

/** What an acknowledgement says of an opening, before it is signed. */
type AckResult = Pick<Ack, 'outcome' | 'reason' | 'pulse' | 'call'>;

/** A phone call's result rides along with `opened` (docs/design.md section 12.6); joined commands share it. */
function ackOf(result: OpenOutcome): AckResult {
  if (result.outcome !== 'opened') return { outcome: 'failed', reason: result.reason };
  return result.call ? { outcome: 'opened', call: result.call } : { outcome: 'opened' };
}

function parseCommand(payload: Buffer | string): Command | null {
  try {
    const result = commandSchema.safeParse(JSON.parse(payload.toString()));
    return result.success ? result.data : null;
  } catch {
    return null;
  }
}
