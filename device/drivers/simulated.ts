import type { ObjectConfig, SimulatedObjectConfig } from '../config.js';
import { type Driver, DriverError, type OpenOutcome, realSleep, type Sleep } from './driver.js';

/** What every driver answers for a second opening of an object in progress (driver.ts). */
const busy: OpenOutcome = {
  outcome: 'failed',
  reason: 'busy',
  detail: 'an opening of this object is in progress',
};

export interface SimulatedDriverOptions {
  objects: readonly SimulatedObjectConfig[];
  sleep?: Sleep;
  /** Called for every state change of a simulated output, so that a demo can show it. */
  onChange?: (objectId: string, active: boolean) => void;
}

/**
 * A driver without hardware, for the demo and for tests. Each object has a simulated output that is active
 * for `pulse_ms` (zero is allowed); an object configured with `fail` fails every opening with that reason.
 * It refuses what the real drivers refuse (driver.ts), so that code tested against it cannot lean on an
 * opening before `start`, after `stop`, or a second one of an object while the first runs.
 */
export class SimulatedDriver implements Driver {
  readonly kind = 'simulated';
  readonly faultReason = 'relay_fault';
  readonly #objects: Map<string, SimulatedObjectConfig>;
  readonly #active = new Set<string>();
  /** Objects with an opening in progress. */
  readonly #opening = new Set<string>();
  readonly #sleep: Sleep;
  readonly #watchers = new Set<(objectId: string, active: boolean) => void>();
  #running = false;
  /** How many times each object was opened; read by tests and the demo. */
  readonly pulses = new Map<string, number>();

  constructor(options: SimulatedDriverOptions) {
    this.#objects = new Map(options.objects.map((object) => [object.id, object]));
    this.#sleep = options.sleep ?? realSleep;
    if (options.onChange) this.#watchers.add(options.onChange);
  }

  async start(): Promise<void> {
    this.#running = true;
    for (const id of this.#objects.keys()) this.#set(id, false);
  }

  async open(object: ObjectConfig): Promise<OpenOutcome> {
    const config = this.#objects.get(object.id);
    if (!config || !this.#running) throw new DriverError('relay_fault', `no simulated output ${object.id}`);
    if (this.#opening.has(object.id)) return busy;
    if (config.fail) return { outcome: 'failed', reason: config.fail, detail: 'simulated failure' };
    this.#opening.add(object.id);
    this.#set(object.id, true);
    try {
      // A zero pulse takes no time: even a zero-delay timer would add a millisecond to every opening.
      if (config.pulse_ms > 0) await this.#sleep(config.pulse_ms);
    } finally {
      this.#set(object.id, false);
      this.#opening.delete(object.id);
    }
    this.pulses.set(object.id, (this.pulses.get(object.id) ?? 0) + 1);
    return { outcome: 'opened' };
  }

  async stop(): Promise<void> {
    this.#running = false;
    for (const id of this.#objects.keys()) this.#set(id, false);
  }

  /**
   * Calls `listener` for every state change of a simulated output, as `onChange` does; the simulated sensors
   * follow the pulses this way (docs/design.md section 12.5). Returns the function that removes it.
   */
  watch(listener: (objectId: string, active: boolean) => void): () => void {
    this.#watchers.add(listener);
    return () => this.#watchers.delete(listener);
  }

  /** How many listeners follow the outputs; read by tests (a stopped simulated sensor follows none). */
  get watchers(): number {
    return this.#watchers.size;
  }

  isActive(objectId: string): boolean {
    return this.#active.has(objectId);
  }

  #set(id: string, active: boolean): void {
    if (active) this.#active.add(id);
    else this.#active.delete(id);
    for (const watcher of [...this.#watchers]) watcher(id, active);
  }
}
