import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeviceConfig, ObjectConfig } from '../../device/config.js';
import type { Driver, OpenOutcome } from '../../device/drivers/driver.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { CommandHandler } from '../../device/runtime/commands.js';
import { ExecutedStore } from '../../device/runtime/executed.js';
import type { SigningKey } from '../../shared/crypto/ed25519.js';
import type { Ack } from '../../shared/protocol/messages.js';
import { verifyAck } from '../../shared/protocol/signing.js';
import {
  command,
  DEVICE_ID,
  fakeClock,
  gate,
  keys,
  makeConfig,
  OTHER_DEVICE_ID,
  tempDir,
  waitFor,
} from './fixtures.js';

/** A driver whose openings wait until the test lets them finish. */
class HeldDriver implements Driver {
  readonly kind = 'simulated';
  readonly faultReason = 'relay_fault';
  readonly held = gate<OpenOutcome>();
  opened = 0;
  async start() {}
  async stop() {}
  open(): Promise<OpenOutcome> {
    this.opened++;
    return this.held.promise;
  }
}

describe('command checks', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let cloud: SigningKey;
  let device: SigningKey;
  let config: DeviceConfig;
  let clock: ReturnType<typeof fakeClock>;
  let synced: boolean;
  let acks: Ack[];
  let driver: Driver;
  let stores: ExecutedStore[];

  /** A store on the same log every time, as after a restart; closed after the test. */
  const executedStore = (options: { retentionMs?: number } = {}) => {
    const store = new ExecutedStore({ file: join(dir, 'executed.log'), now: clock.now, ...options });
    stores.push(store);
    return store;
  };

  const handler = (store?: ExecutedStore) =>
    new CommandHandler({
      deviceId: DEVICE_ID,
      commandKey: cloud.publicKey,
      deviceKey: device,
      objects: config.objects,
      driverFor: () => driver,
      executed: store ?? executedStore(),
      clock: {
        get synced() {
          return synced;
        },
      },
      now: clock.now,
      deliver: async (ack) => {
        acks.push(ack);
      },
    });

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    ({ cloud, device } = keys());
    config = await makeConfig(dir, { cloudKey: cloud, deviceKey: device });
    clock = fakeClock();
    synced = true;
    acks = [];
    driver = new SimulatedDriver({ objects: config.objects.filter((o) => o.kind === 'simulated') });
    stores = [];
  });
  afterEach(async () => {
    for (const store of stores) await store.close();
    await cleanup();
  });

  it('opens on a valid command and acknowledges it signed with the device key', async () => {
    const cmd = command(cloud, clock.now());
    const ack = await handler().handle(JSON.stringify(cmd));
    expect(ack).toMatchObject({ command_id: cmd.id, device_id: DEVICE_ID, outcome: 'opened' });
    expect(ack?.reason).toBeUndefined();
    expect(verifyAck(device.publicKey, ack!)).toBe(true);
    expect((driver as SimulatedDriver).pulses.get('gate')).toBe(1);
    expect(acks).toEqual([ack]);
  });

  it('refuses a forged signature', async () => {
    const forger = keys().cloud;
    const ack = await handler().handle(JSON.stringify(command(forger, clock.now())));
    expect(ack).toMatchObject({ outcome: 'refused', reason: 'bad_signature' });
    expect(verifyAck(device.publicKey, ack!)).toBe(true);
  });

  it('refuses a command altered after signing', async () => {
    const cmd = { ...command(cloud, clock.now()), object: 'garage' };
    expect(await handler().handle(JSON.stringify(cmd))).toMatchObject({ reason: 'bad_signature' });
  });

  it('refuses a command for another device', async () => {
    const ack = await handler().handle(
      JSON.stringify(command(cloud, clock.now(), { device_id: OTHER_DEVICE_ID })),
    );
    expect(ack).toMatchObject({ outcome: 'refused', reason: 'wrong_device', device_id: DEVICE_ID });
  });

  it('refuses a command that arrives after expires_at', async () => {
    const cmd = command(cloud, clock.now());
    clock.advance(5001);
    expect(await handler().handle(JSON.stringify(cmd))).toMatchObject({
      outcome: 'refused',
      reason: 'expired',
    });
    expect((driver as SimulatedDriver).pulses.size).toBe(0);
  });

  it('names the clock as the reason while it is not synchronised', async () => {
    synced = false;
    const cmd = command(cloud, clock.now());
    expect(await handler().handle(JSON.stringify(cmd))).toMatchObject({ reason: 'clock_unsynced' });
  });

  it('refuses a repeated id, also after a restart', async () => {
    const cmd = command(cloud, clock.now());
    const first = handler();
    expect(await first.handle(JSON.stringify(cmd))).toMatchObject({ outcome: 'opened' });
    expect(await first.handle(JSON.stringify(cmd))).toMatchObject({
      outcome: 'refused',
      reason: 'duplicate',
    });
    const store = executedStore();
    await store.load();
    expect(await handler(store).handle(JSON.stringify(cmd))).toMatchObject({ reason: 'duplicate' });
    expect((driver as SimulatedDriver).pulses.get('gate')).toBe(1);
  });

  it('refuses a copy redelivered after a crash mid-pulse: the id is on disk before the driver acts', async () => {
    const held = new HeldDriver();
    driver = held;
    const cmd = command(cloud, clock.now());
    // The first run reaches the driver and never finishes: no acknowledgement, nothing closed or flushed.
    void handler().handle(JSON.stringify(cmd));
    await waitFor(() => held.opened === 1, 'the driver to act');

    const restarted = executedStore();
    await restarted.load();
    driver = new SimulatedDriver({ objects: config.objects.filter((o) => o.kind === 'simulated') });
    expect(await handler(restarted).handle(JSON.stringify(cmd))).toMatchObject({
      outcome: 'refused',
      reason: 'duplicate',
    });
    expect((driver as SimulatedDriver).pulses.get('gate')).toBeUndefined();
  });

  it('refuses an unknown object', async () => {
    const ack = await handler().handle(JSON.stringify(command(cloud, clock.now(), { object: 'window' })));
    expect(ack).toMatchObject({ reason: 'unknown_object' });
  });

  it('runs one operation per object: a second command for a busy object is refused', async () => {
    const held = new HeldDriver();
    driver = held;
    const h = handler();
    const first = h.handle(JSON.stringify(command(cloud, clock.now())));
    expect(await h.handle(JSON.stringify(command(cloud, clock.now())))).toMatchObject({ reason: 'busy' });
    const other = h.handle(JSON.stringify(command(cloud, clock.now(), { object: 'garage' })));
    held.held.open({ outcome: 'opened' });
    expect(await first).toMatchObject({ outcome: 'opened' });
    expect(await other).toMatchObject({ outcome: 'opened' });
    expect(held.opened).toBe(2);
  });

  it('answers a copy that arrives during the operation only after the real outcome', async () => {
    const held = new HeldDriver();
    driver = held;
    const h = handler();
    const cmd = command(cloud, clock.now());
    const first = h.handle(JSON.stringify(cmd));
    const copy = h.handle(JSON.stringify(cmd));
    held.held.open({ outcome: 'failed', reason: 'relay_fault' });
    await Promise.all([first, copy]);
    expect(acks.map((a) => [a.outcome, a.reason])).toEqual([
      ['failed', 'relay_fault'],
      ['refused', 'duplicate'],
    ]);
    expect(held.opened).toBe(1);
  });

  it('reports relay_fault when the driver throws mid-pulse', async () => {
    driver = {
      kind: 'simulated',
      faultReason: 'relay_fault',
      start: async () => undefined,
      stop: async () => undefined,
      open: async (_object: ObjectConfig) => {
        throw new Error('line went away');
      },
    };
    const ack = await handler().handle(JSON.stringify(command(cloud, clock.now())));
    expect(ack).toMatchObject({ outcome: 'failed', reason: 'relay_fault' });
  });

  it('checks in order: device, signature, clock, expiry', async () => {
    synced = false;
    const forger = keys().cloud;
    const h = handler();
    const late = command(forger, clock.now() - 10_000, { device_id: OTHER_DEVICE_ID });
    expect(await h.handle(JSON.stringify(late))).toMatchObject({ reason: 'wrong_device' });
    expect(await h.handle(JSON.stringify(command(forger, clock.now() - 10_000)))).toMatchObject({
      reason: 'bad_signature',
    });
    expect(await h.handle(JSON.stringify(command(cloud, clock.now() - 10_000)))).toMatchObject({
      reason: 'clock_unsynced',
    });
  });

  it('drops a payload that is not a command, without acknowledging', async () => {
    const h = handler();
    expect(await h.handle('not json')).toBeNull();
    expect(await h.handle(JSON.stringify({ ...command(cloud, clock.now()), action: 'close' }))).toBeNull();
    expect(acks).toEqual([]);
  });

  it('forgets executed ids only long after they expired', async () => {
    const store = executedStore({ retentionMs: 60_000 });
    await store.add('a', clock.now() + 5000);
    clock.advance(5000 + 59_000);
    expect(store.has('a')).toBe(true);
    clock.advance(2000);
    expect(store.has('a')).toBe(false);
  });
});
