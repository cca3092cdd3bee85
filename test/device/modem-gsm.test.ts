import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GsmObjectConfig, ModemConfig } from '../../device/config.js';
import { ModemGsmDriver } from '../../device/drivers/modem-gsm.js';
import { waitFor } from '../support/wait-for.js';
import { FakeModem } from './fake-modem.js';
import { tempDir } from './fixtures.js';
import { hasSocat, PtyPair } from './pty-pair.js';

/**
 * The GSM driver through the real serialport stack, against a simulated modem on a pseudo-terminal pair made
 * by socat. Timeouts are short through the config; nothing here asserts how long anything took.
 */
if (!hasSocat) console.warn('modem-gsm tests skipped: socat is not installed (apt-get install socat)');

const modemConfig = (path: string): ModemConfig => ({
  path,
  baud_rate: 115200,
  command_timeout_ms: 300,
  health_interval_ms: 100,
  poll_ms: 20,
  reopen_min_ms: 50,
  reopen_max_ms: 200,
});

const gateObject: GsmObjectConfig = {
  id: 'barrier',
  label: 'Barrier',
  kind: 'gsm',
  number: '+491701234567',
  ring_timeout_ms: 600,
  ring_hold_ms: 10_000,
};

describe.skipIf(!hasSocat)('GSM modem driver over a pseudo-terminal', () => {
  let cleanup: () => Promise<void>;
  let pty: PtyPair;
  let modem: FakeModem;
  let driver: ModemGsmDriver;
  const states: string[] = [];

  beforeEach(async () => {
    const temp = await tempDir();
    cleanup = temp.cleanup;
    pty = new PtyPair(temp.dir);
    await pty.start();
    modem = await FakeModem.open(pty.modem);
    states.length = 0;
    driver = new ModemGsmDriver({ modem: modemConfig(pty.host), objects: [gateObject] });
    driver.onState((state) => states.push(state));
    await driver.start();
    await waitFor(() => driver.state === 'ready', 'the modem to be ready');
  });

  afterEach(async () => {
    await driver.stop();
    await modem.close();
    await pty.stop();
    await cleanup();
  });

  it('initialises the modem and reports its signal quality', () => {
    expect(modem.received.slice(0, 4)).toEqual(['AT', 'ATZ', 'ATE0', 'AT+CMEE=1']);
    expect(driver.signalQuality()).toBe(18);
  });

  it('opens once the call rang at the module and the module dropped it, then hangs up', async () => {
    modem.scenario = 'ring-then-drop';
    expect(await driver.open(gateObject)).toEqual({ outcome: 'opened' });
    expect(modem.received).toContain('ATD+491701234567;');
    expect(modem.received.at(-1)).toBe('ATH');
  });

  it('counts BUSY after ringing as the module rejecting a known caller: opened', async () => {
    modem.scenario = 'ring-then-busy';
    expect(await driver.open(gateObject)).toEqual({ outcome: 'opened' });
  });

  it('opens and hangs up itself when the module keeps ringing', async () => {
    modem.scenario = 'ring-then-drop';
    const shortHold = { ...gateObject, ring_hold_ms: 0 };
    const quick = new ModemGsmDriver({ modem: modemConfig(pty.host), objects: [shortHold] });
    await driver.stop();
    await quick.start();
    driver = quick;
    await waitFor(() => quick.state === 'ready', 'the modem to be ready');
    expect(await quick.open(shortHold)).toEqual({ outcome: 'opened' });
    expect(modem.received.at(-1)).toBe('ATH');
  });

  it.each([
    ['busy', 'busy'],
    ['no-carrier', 'no_carrier'],
    ['no-answer', 'no_answer'],
    ['never-rings', 'no_answer'],
  ] as const)('reports %s before ringing as %s and hangs up', async (scenario, reason) => {
    modem.scenario = scenario;
    const result = await driver.open(gateObject);
    expect(result).toMatchObject({ outcome: 'failed', reason });
    expect(modem.received.at(-1)).toBe('ATH');
  });

  it('reports no_network without dialling when the modem is not registered', async () => {
    modem.registered = false;
    expect(await driver.open(gateObject)).toMatchObject({ outcome: 'failed', reason: 'no_network' });
    expect(modem.count('ATD')).toBe(0);
  });

  it('answers a second object with busy while a call is in progress', async () => {
    modem.scenario = 'never-rings';
    const first = driver.open(gateObject);
    expect(await driver.open(gateObject)).toMatchObject({ outcome: 'failed', reason: 'busy' });
    await first;
  });

  it('reports modem_error when the modem stops answering, then recovers by reopening it', async () => {
    modem.mute = true;
    expect(await driver.open(gateObject)).toMatchObject({ outcome: 'failed', reason: 'modem_error' });
    await waitFor(() => states.includes('reopening'), 'the driver to reopen the modem');
    modem.mute = false;
    await waitFor(() => driver.state === 'ready', 'the modem to be ready again');
    modem.scenario = 'ring-then-drop';
    expect(await driver.open(gateObject)).toEqual({ outcome: 'opened' });
  });

  it('reopens the port when it disappears and comes back', async () => {
    await modem.close();
    await pty.stop();
    await waitFor(() => driver.state !== 'ready', 'the driver to notice the port is gone');
    expect(await driver.open(gateObject)).toMatchObject({ outcome: 'failed', reason: 'modem_error' });
    await pty.start();
    modem = await FakeModem.open(pty.modem);
    await waitFor(() => driver.state === 'ready', 'the modem to be reopened');
    expect(await driver.open(gateObject)).toEqual({ outcome: 'opened' });
  });
});
