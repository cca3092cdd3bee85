import type {
  GsmObjectConfig,
  PhoneObjectConfig,
  RelayObjectConfig,
  SimulatedObjectConfig,
} from '../../device/config.js';
import { realSleep, type Sleep } from '../../device/drivers/driver.js';
import { ModemGsmDriver } from '../../device/drivers/modem-gsm.js';
import { PhoneCallDriver } from '../../device/drivers/phone-call.js';
import { RelayGpioDriver } from '../../device/drivers/relay-gpio.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { waitFor } from '../support/wait-for.js';
import { type DriverHarness, driverContract } from './driver-contract.js';
import { fakeGpio, fakeSysfs, PI4_CHIPS } from './fake-gpio.js';
import { FakeModem } from './fake-modem.js';
import { FakeTermux } from './fake-termux.js';
import { tempDir } from './fixtures.js';
import { hasSocat, PtyPair } from './pty-pair.js';

/** A sleep that throws once after `breakNext()`, as an opening interrupted half way. */
function breakableSleep() {
  let broken = false;
  const sleep: Sleep = async (ms) => {
    if (broken) {
      broken = false;
      throw new Error('interrupted half way');
    }
    await realSleep(ms);
  };
  return { sleep, breakNext: () => (broken = true) };
}

const PULSE_MS = 20;

/** The relay driver on a fake sysfs folder and fake pins: the GPIO chip is the one part that cannot exist here. */
async function relayHarness(): Promise<DriverHarness> {
  const temp = await tempDir();
  await fakeSysfs(temp.dir, PI4_CHIPS);
  const gpio = fakeGpio();
  const { sleep, breakNext } = breakableSleep();
  const relay = (id: string, line: number): RelayObjectConfig => ({
    id,
    label: id,
    kind: 'relay',
    line,
    chip: 'auto',
    sysfs_base: 'auto',
    active_low: true,
    pulse_ms: PULSE_MS,
  });
  const objects = [relay('gate', 17), relay('garage', 27)] as const;
  // BCM 17 and 27 on gpiochip512; active low, so released is 1.
  const sysfs = new Map([
    ['gate', 529],
    ['garage', 539],
  ]);
  return {
    driver: new RelayGpioDriver({ objects, sysfsRoot: temp.dir, Gpio: gpio.Gpio, sleep }),
    objects,
    servesObjectsAtOnce: true,
    ready: async () => undefined,
    isSafe: async () => [...sysfs.values()].every((n) => (gpio.levels.get(n) ?? 1) === 1),
    actions: (object) => gpio.writes.filter((w) => w.gpio === sysfs.get(object.id) && w.value === 0).length,
    breakNextOpening: breakNext,
    leaveUnsafe: () => {
      for (const n of sysfs.values()) gpio.levels.set(n, 0);
    },
    dispose: temp.cleanup,
  };
}

/** The real serialport driver against the simulated modem on a socat pseudo-terminal pair. */
async function modemHarness(): Promise<DriverHarness> {
  const temp = await tempDir();
  const pty = new PtyPair(temp.dir);
  await pty.start();
  const modem = await FakeModem.open(pty.modem);
  const gsm = (id: string, number: string): GsmObjectConfig => ({
    id,
    label: id,
    kind: 'gsm',
    number,
    ring_timeout_ms: 300,
    ring_hold_ms: 10_000,
  });
  // The driver's clock moves one poll interval each time the driver reads it, once per poll of the call: the
  // ring timeout is then 15 polls however slow the machine, and the modem rings at the second.
  let polled = 0;
  const now = () => (polled += 20);
  const objects = [gsm('barrier', '+491701234567'), gsm('garage', '+491707654321')] as const;
  const driver = new ModemGsmDriver({
    modem: {
      path: pty.host,
      baud_rate: 115200,
      // Real time, for an answer that does come: generous, since a busy machine is slow to pass bytes along.
      command_timeout_ms: 5_000,
      health_interval_ms: 100,
      poll_ms: 20,
      reopen_min_ms: 50,
      reopen_max_ms: 200,
    },
    objects,
    now,
  });
  return {
    driver,
    objects,
    servesObjectsAtOnce: false,
    ready: () => waitFor(() => driver.state === 'ready', 'the modem to be ready'),
    isSafe: async () => {
      // Bytes cross the pseudo-terminal asynchronously: give a late command a few poll intervals to arrive.
      await realSleep(100);
      return !modem.callActive;
    },
    actions: (object) => modem.rang.filter((number) => number === (object as GsmObjectConfig).number).length,
    breakNextOpening: () => {
      modem.scenario = 'never-rings';
    },
    leaveUnsafe: () => modem.leaveCallUp(),
    dispose: async () => {
      await modem.close();
      await pty.stop();
      await temp.cleanup();
    },
  };
}

/**
 * The Termux driver against fake Termux:API commands first on PATH (test/device/fake-termux.ts), with waits
 * that take no real time: Termux's Node.js is a bionic build that cannot run here (docs/design.md section 12.6).
 */
async function phoneHarness(): Promise<DriverHarness> {
  const termux = await FakeTermux.create('rejects');
  const phone = (id: string, number: string): PhoneObjectConfig => ({
    id,
    label: id,
    kind: 'phone',
    number,
    command_timeout_ms: 5_000,
    call_timeout_ms: 5_000,
    poll_ms: 500,
  });
  let clock = 0;
  const sleep: Sleep = async (ms) => {
    clock += ms;
  };
  const objects = [phone('barrier', '+491701234567'), phone('garage', '+491707654321')] as const;
  return {
    driver: new PhoneCallDriver({ objects, sleep, now: () => clock, env: termux.env }),
    objects,
    servesObjectsAtOnce: false,
    ready: async () => undefined,
    isSafe: () => termux.idle(),
    actions: (object) =>
      termux.dialledSync().filter((number) => number === (object as PhoneObjectConfig).number).length,
    breakNextOpening: () => termux.setSync({ scenario: 'airplane' }),
    dispose: () => termux.dispose(),
  };
}

/** The demo's and the tests' driver, which must refuse what the real ones refuse. */
async function simulatedHarness(): Promise<DriverHarness> {
  const { sleep, breakNext } = breakableSleep();
  const simulated = (id: string): SimulatedObjectConfig => ({
    id,
    label: id,
    kind: 'simulated',
    pulse_ms: PULSE_MS,
  });
  const objects = [simulated('gate'), simulated('garage')] as const;
  const driver = new SimulatedDriver({ objects, sleep });
  return {
    driver,
    objects,
    servesObjectsAtOnce: true,
    ready: async () => undefined,
    isSafe: async () => objects.every((object) => !driver.isActive(object.id)),
    actions: (object) => driver.pulses.get(object.id) ?? 0,
    breakNextOpening: breakNext,
    dispose: async () => undefined,
  };
}

driverContract('GPIO relay', relayHarness);
driverContract('GSM modem', modemHarness, {
  skip: hasSocat ? undefined : 'socat is not installed (apt-get install socat)',
});
driverContract('simulated', simulatedHarness);
driverContract('Termux phone call', phoneHarness);
