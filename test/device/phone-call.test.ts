import { afterEach, describe, expect, it } from 'vitest';
import type { PhoneObjectConfig } from '../../device/config.js';
import type { Sleep } from '../../device/drivers/driver.js';
import { PhoneCallDriver } from '../../device/drivers/phone-call.js';
import { FakeTermux, type PhoneScenario } from './fake-termux.js';

/**
 * What an opening of a phone object reports for each answer Termux:API gives (docs/design.md section 12.6),
 * against fake Termux:API commands first on PATH, with waits that take no real time.
 */
const NUMBER = '+491701234567';
const gate: PhoneObjectConfig = {
  id: 'barrier',
  label: 'Barrier',
  kind: 'phone',
  number: NUMBER,
  command_timeout_ms: 5_000,
  call_timeout_ms: 10_000,
  poll_ms: 1_000,
};

let termux: FakeTermux | null = null;
let driver: PhoneCallDriver | null = null;
afterEach(async () => {
  await driver?.stop();
  await termux?.dispose();
  driver = null;
  termux = null;
});

/** A started driver on a fake phone answering as `scenario`; its clock moves only when it waits. */
async function phone(scenario: PhoneScenario, object: PhoneObjectConfig = gate) {
  termux = await FakeTermux.create(scenario);
  const waits: number[] = [];
  let clock = 0;
  const sleep: Sleep = async (ms) => {
    waits.push(ms);
    clock += ms;
  };
  const lines: string[] = [];
  driver = new PhoneCallDriver({
    objects: [object],
    sleep,
    now: () => clock,
    env: termux.env,
    log: (line) => lines.push(line),
  });
  await driver.start();
  return { termux, driver, waits, lines };
}

describe('phone-call driver', () => {
  it('dials the gate with termux-telephony-call <number> and reports a rejected call as opened, unanswered', async () => {
    const { termux, driver, waits } = await phone('rejects');
    expect(await driver.open(gate)).toEqual({ outcome: 'opened', call: 'unanswered' });
    expect(await termux.dialled()).toEqual([NUMBER]);
    const runs = (await termux.state()).runs;
    expect(runs.map((run) => run.command)).toEqual([
      'termux-telephony-deviceinfo',
      'termux-call-log',
      'termux-telephony-call',
      'termux-call-log',
    ]);
    expect(runs[2]?.args).toEqual([NUMBER]);
    expect(runs[1]?.args).toEqual(['-l', '5']);
    expect(waits).toEqual([1_000]);
  });

  it('reports a call the module picked up as answered', async () => {
    const { driver } = await phone('answers');
    expect(await driver.open(gate)).toEqual({ outcome: 'opened', call: 'answered' });
  });

  it('waits, poll by poll, for a call that rings until it shows in the call log', async () => {
    const { termux, driver, waits } = await phone('rings');
    expect(await driver.open(gate)).toEqual({ outcome: 'opened', call: 'unanswered' });
    expect(waits).toEqual([1_000, 1_000, 1_000]);
    expect(await termux.idle()).toBe(true);
  });

  it('reports the call only as placed when it does not show within call_timeout_ms', async () => {
    const { termux, driver, waits, lines } = await phone('rings');
    await termux.set({ ringReads: 1000 });
    expect(await driver.open(gate)).toEqual({ outcome: 'opened', call: 'placed' });
    expect(waits).toHaveLength(10);
    expect(lines).toEqual(['phone: the call to barrier did not show in the call log within 10000 ms']);
  });

  it('reports the call as placed when the call log cannot be read (READ_CALL_LOG not granted)', async () => {
    const { termux, driver, waits } = await phone('log-permission');
    expect(await driver.open(gate)).toEqual({ outcome: 'opened', call: 'placed' });
    expect(await termux.dialled()).toEqual([NUMBER]);
    expect(waits).toEqual([]);
  });

  it('fails with modem_error, naming CALL_PHONE, when Termux:API may not call', async () => {
    const { termux, driver } = await phone('call-permission');
    const outcome = await driver.open(gate);
    expect(outcome).toMatchObject({ outcome: 'failed', reason: 'modem_error' });
    expect(outcome.outcome === 'failed' && outcome.detail).toMatch(/android\.permission\.CALL_PHONE/);
    expect(await termux.dialled()).toEqual([]);
  });

  it.each([
    ['no-sim', /no SIM/],
    ['airplane', /registered with no network \(airplane mode/],
  ] as const)('fails with no_network before dialling when the phone says %s', async (scenario, detail) => {
    const { termux, driver } = await phone(scenario);
    const outcome = await driver.open(gate);
    expect(outcome).toMatchObject({
      outcome: 'failed',
      reason: 'no_network',
      detail: expect.stringMatching(detail),
    });
    expect((await termux.state()).runs.map((run) => run.command)).toEqual(['termux-telephony-deviceinfo']);
  });

  it('fails with modem_error, saying to install the app, when Termux:API never answers', async () => {
    // The one real wait here: the command timeout, which kills the command that hangs as without the app.
    const { termux, driver } = await phone('no-api-app', { ...gate, command_timeout_ms: 300 });
    const outcome = await driver.open(gate);
    expect(outcome).toMatchObject({
      outcome: 'failed',
      reason: 'modem_error',
      detail: expect.stringMatching(/did not answer within 300 ms: install the Termux:API app/),
    });
    expect(await termux.dialled()).toEqual([]);
  });

  it('fails with modem_error, saying which package to install, when the commands are not on PATH', async () => {
    const { termux, driver } = await phone('rejects');
    await termux.remove('termux-telephony-deviceinfo');
    await termux.remove('termux-telephony-call');
    const outcome = await driver.open(gate);
    expect(outcome).toMatchObject({
      outcome: 'failed',
      reason: 'modem_error',
      detail: expect.stringMatching(/termux-telephony-deviceinfo is not on PATH.*pkg install termux-api/),
    });
  });

  it('stop() ends the wait for a call that is still ringing; the call is reported placed', async () => {
    const { termux, driver } = await phone('rings');
    await termux.set({ ringReads: 1000 });
    let clock = 0;
    const slow = new PhoneCallDriver({
      objects: [gate],
      // Each wait would last a minute; stop must not wait for it.
      sleep: () => new Promise<void>((resolve) => setTimeout(resolve, 60_000).unref()),
      now: () => clock++,
      env: termux.env,
    });
    await slow.start();
    const opening = slow.open(gate);
    while ((await termux.dialled()).length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await slow.stop();
    expect(await opening).toEqual({ outcome: 'opened', call: 'placed' });
    await driver.stop();
  });

  it('refuses an object it does not serve and an open after stop, without dialling', async () => {
    const { termux, driver } = await phone('rejects');
    await expect(driver.open({ ...gate, id: 'other' })).rejects.toMatchObject({ reason: 'modem_error' });
    await driver.stop();
    await expect(driver.open(gate)).rejects.toMatchObject({ reason: 'modem_error' });
    expect(await termux.dialled()).toEqual([]);
  });
});
