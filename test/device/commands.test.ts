import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeviceConfig, ObjectConfig } from '../../device/config.js';
import type { Driver, OpenOutcome } from '../../device/drivers/driver.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { CommandHandler } from '../../device/runtime/commands.js';
import { ExecutedIds } from '../../device/runtime/executed.js';
import type { SigningKey } from '../../shared/crypto/ed25519.js';
import { type Ack, ackSchema } from '../../shared/protocol/messages.js';
import { verifyAck } from '../../shared/protocol/signing.js';
import { waitFor } from '../support/wait-for.js';
import {
  command,
  DEVICE_ID,
  fakeClock,
  gate,
  keys,
  makeConfig,
  OTHER_DEVICE_ID,
  tempDir,
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
  /** When this run of the controller found its clock synchronised. */
  let trustedSince: number;
  let acks: Ack[];
  let driver: Driver;
  /** What an acknowledgement's delivery waits for after it is handed over; nothing unless a test holds it. */
  let delivering: Promise<void> | null = null;

  /** A handler with the ids of `executed`; a new one with new ids is the controller after a restart. */
  const handler = (executed = new ExecutedIds({ now: clock.now })) =>
    new CommandHandler({
      deviceId: DEVICE_ID,
      commandKey: cloud.publicKey,
      deviceKey: device,
      objects: config.objects,
      driverFor: () => driver,
      executed,
      clock: {
        get synced() {
          return synced;
        },
        get trustedSince() {
          return synced ? trustedSince : null;
        },
      },
      now: clock.now,
      deliver: async (ack) => {
        acks.push(ack);
        await delivering;
      },
    });

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    ({ cloud, device } = keys());
    config = await makeConfig(dir, { cloudKey: cloud, deviceKey: device });
    clock = fakeClock();
    synced = true;
    trustedSince = clock.now();
    acks = [];
    driver = await startedSimulated(config);
  });
  afterEach(async () => {
    await cleanup();
  });

  /** A restart a second later: no ids remembered, the clock trusted from then on. */
  const restart = () => {
    clock.advance(1000);
    trustedSince = clock.now();
    return handler();
  };

  it('opens on a valid command and acknowledges it signed with the device key', async () => {
    const cmd = command(cloud, clock.now());
    const ack = await handler().handle(JSON.stringify(cmd));
    expect(ack).toMatchObject({ command_id: cmd.id, device_id: DEVICE_ID, outcome: 'opened' });
    expect(ack?.reason).toBeUndefined();
    expect(verifyAck(device.publicKey, ack!)).toBe(true);
    expect((driver as SimulatedDriver).pulses.get('gate')).toBe(1);
    expect(acks).toEqual([ack]);
  });

  it('[attack:command.forged] refuses a forged signature', async () => {
    const forger = keys().cloud;
    const ack = await handler().handle(JSON.stringify(command(forger, clock.now())));
    expect(ack).toMatchObject({ outcome: 'refused', reason: 'bad_signature' });
    expect(verifyAck(device.publicKey, ack!)).toBe(true);
  });

  it('[attack:command.forged] refuses a command altered after signing', async () => {
    const cmd = { ...command(cloud, clock.now()), object: 'garage' };
    expect(await handler().handle(JSON.stringify(cmd))).toMatchObject({ reason: 'bad_signature' });
  });

  it('[attack:command.forged] refuses a copy whose signature text differs only in bits that base64 decoders ignore', async () => {
    // Found by test/fuzz/command-parser.test.ts: the last of 86 characters carries two bits of the signature
    // and four that Buffer drops, so 'A' and 'B' there decode to the same bytes.
    const cmd = command(cloud, clock.now());
    const last = cmd.sig.at(-3)!;
    const sig = `${cmd.sig.slice(0, 85)}${String.fromCharCode(last.charCodeAt(0) + 1)}==`;
    const ack = await handler().handle(JSON.stringify({ ...cmd, sig }));
    expect(ack).toMatchObject({ outcome: 'refused', reason: 'bad_signature' });
    expect((driver as SimulatedDriver).pulses.size).toBe(0);
  });

  it('[attack:command.misdirected] refuses a command for another device', async () => {
    const ack = await handler().handle(
      JSON.stringify(command(cloud, clock.now(), { device_id: OTHER_DEVICE_ID })),
    );
    expect(ack).toMatchObject({ outcome: 'refused', reason: 'wrong_device', device_id: DEVICE_ID });
  });

  it('[attack:command.expired] refuses a command that arrives after expires_at', async () => {
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

  it('[attack:command.replayed] refuses a repeated id; after a restart, refuses it as stale', async () => {
    const cmd = command(cloud, clock.now());
    const first = handler();
    expect(await first.handle(JSON.stringify(cmd))).toMatchObject({ outcome: 'opened' });
    expect(await first.handle(JSON.stringify(cmd))).toMatchObject({
      outcome: 'refused',
      reason: 'duplicate',
    });
    expect(await restart().handle(JSON.stringify(cmd))).toMatchObject({
      outcome: 'refused',
      reason: 'stale',
    });
    expect((driver as SimulatedDriver).pulses.get('gate')).toBe(1);
  });

  it('[attack:command.replayed] refuses a copy redelivered after a crash mid-pulse, with nothing on disk', async () => {
    const held = new HeldDriver();
    driver = held;
    const cmd = command(cloud, clock.now());
    // The first run reaches the driver and never finishes: no acknowledgement, nothing closed or flushed.
    void handler().handle(JSON.stringify(cmd));
    await waitFor(() => held.opened === 1, 'the driver to act');

    const restarted = restart();
    driver = await startedSimulated(config);
    expect(await restarted.handle(JSON.stringify(cmd))).toMatchObject({
      outcome: 'refused',
      reason: 'stale',
    });
    expect((driver as SimulatedDriver).pulses.get('gate')).toBeUndefined();
    // A command the cloud issues after the restart opens.
    expect(await restarted.handle(JSON.stringify(command(cloud, clock.now())))).toMatchObject({
      outcome: 'opened',
    });
  });

  it('[attack:command.expired] refuses a command issued before the clock was synchronised in this run, however its time reads', async () => {
    // A controller without a battery-backed clock boots with the time it saved last: earlier than the
    // commands it executed before a power cut. Those commands were issued before its clock is synchronised.
    const beforeTheCut = command(cloud, clock.now());
    synced = false;
    const booted = handler();
    expect(await booted.handle(JSON.stringify(beforeTheCut))).toMatchObject({ reason: 'clock_unsynced' });
    clock.advance(2000);
    synced = true;
    trustedSince = clock.now();
    expect(await booted.handle(JSON.stringify(beforeTheCut))).toMatchObject({ reason: 'stale' });
    expect(await booted.handle(JSON.stringify(command(cloud, clock.now())))).toMatchObject({
      outcome: 'opened',
    });
    expect((driver as SimulatedDriver).pulses.get('gate')).toBe(1);
  });

  it('[attack:command.misdirected] refuses an unknown object', async () => {
    const ack = await handler().handle(JSON.stringify(command(cloud, clock.now(), { object: 'window' })));
    expect(ack).toMatchObject({ reason: 'unknown_object' });
  });

  it('[attack:command.concurrent] runs one operation per object: a second command for it joins the pulse under way', async () => {
    const held = new HeldDriver();
    driver = held;
    const h = handler();
    const started = command(cloud, clock.now());
    const first = h.handle(JSON.stringify(started));
    const joined = h.handle(JSON.stringify(command(cloud, clock.now())));
    const other = h.handle(JSON.stringify(command(cloud, clock.now(), { object: 'garage' })));
    held.held.open({ outcome: 'opened' });
    expect(await first).toMatchObject({ outcome: 'opened' });
    expect(await first).not.toHaveProperty('pulse');
    // One relay action for the gate, both answered by it, the second naming the pulse it joined.
    expect(await joined).toMatchObject({ outcome: 'opened', pulse: started.id });
    expect(await other).toMatchObject({ outcome: 'opened' });
    expect(held.opened).toBe(2);
    // Signed like any acknowledgement, the pulse included.
    expect(verifyAck(device.publicKey, (await joined)!)).toBe(true);
  });

  it("carries a phone call's result in the signed acknowledgement, the joined command's too (docs/design.md section 12.6)", async () => {
    const held = new HeldDriver();
    driver = held;
    const h = handler();
    const started = command(cloud, clock.now());
    const first = h.handle(JSON.stringify(started));
    const joined = h.handle(JSON.stringify(command(cloud, clock.now())));
    held.held.open({ outcome: 'opened', call: 'unanswered' });
    const ack = (await first)!;
    expect(ack).toMatchObject({ outcome: 'opened', call: 'unanswered' });
    expect(ackSchema.parse(ack)).toEqual(ack);
    expect(verifyAck(device.publicKey, ack)).toBe(true);
    // The signature covers it: a copy that says the module answered does not verify.
    expect(verifyAck(device.publicKey, { ...ack, call: 'answered' })).toBe(false);
    const { call: _call, ...without } = ack;
    expect(verifyAck(device.publicKey, without)).toBe(false);
    expect(await joined).toMatchObject({ outcome: 'opened', call: 'unanswered', pulse: started.id });
    expect(verifyAck(device.publicKey, (await joined)!)).toBe(true);
  });

  it('sends no call field for an opening without one, nor for a failure', async () => {
    const ack = await handler().handle(JSON.stringify(command(cloud, clock.now())));
    expect(ack).not.toHaveProperty('call');
  });

  it("gives a joined command the pulse's failure, and starts a new pulse once one is over", async () => {
    const held = new HeldDriver();
    driver = held;
    const h = handler();
    const first = h.handle(JSON.stringify(command(cloud, clock.now())));
    const joined = h.handle(JSON.stringify(command(cloud, clock.now())));
    held.held.open({ outcome: 'failed', reason: 'relay_fault' });
    expect(await joined).toMatchObject({ outcome: 'failed', reason: 'relay_fault' });
    await first;
    const again = new HeldDriver();
    driver = again;
    const next = h.handle(JSON.stringify(command(cloud, clock.now())));
    again.held.open({ outcome: 'opened' });
    expect(await next).toMatchObject({ outcome: 'opened' });
    expect(await next).not.toHaveProperty('pulse');
    expect([held.opened, again.opened]).toEqual([1, 1]);
  });

  it('starts a new pulse for a command that comes while the last one’s ack goes out, and lets the next join it', async () => {
    const outbox = gate();
    delivering = outbox.promise;
    const firstDriver = new HeldDriver();
    driver = firstDriver;
    const h = handler();
    const first = h.handle(JSON.stringify(command(cloud, clock.now())));
    firstDriver.held.open({ outcome: 'opened' });
    await waitFor(() => acks.length === 1, 'the first acknowledgement going out');
    const secondDriver = new HeldDriver();
    driver = secondDriver;
    const started = command(cloud, clock.now());
    const second = h.handle(JSON.stringify(started));
    // The first acknowledgement delivered: its opening ends, and the second's pulse goes on.
    outbox.open();
    delivering = null;
    await first;
    const third = h.handle(JSON.stringify(command(cloud, clock.now())));
    secondDriver.held.open({ outcome: 'opened' });
    expect(await second).not.toHaveProperty('pulse');
    expect(await third).toMatchObject({ outcome: 'opened', pulse: started.id });
    expect([firstDriver.opened, secondDriver.opened]).toEqual([1, 1]);
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

  it('checks in order: device, signature, clock, expiry, then a repeat or a command older than this run', async () => {
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
    synced = true;
    expect(await h.handle(JSON.stringify(command(cloud, clock.now() - 10_000)))).toMatchObject({
      reason: 'expired',
    });
    expect(await h.handle(JSON.stringify(command(cloud, clock.now() - 1000)))).toMatchObject({
      reason: 'stale',
    });
  });

  it('drops a payload that is not a command, without acknowledging', async () => {
    const h = handler();
    expect(await h.handle('not json')).toBeNull();
    expect(await h.handle(JSON.stringify({ ...command(cloud, clock.now()), action: 'close' }))).toBeNull();
    expect(acks).toEqual([]);
  });
});

/** A simulated driver ready to open: like the real ones, it refuses openings before start (driver.ts). */
async function startedSimulated(config: DeviceConfig): Promise<SimulatedDriver> {
  const simulated = new SimulatedDriver({ objects: config.objects.filter((o) => o.kind === 'simulated') });
  await simulated.start();
  return simulated;
}
