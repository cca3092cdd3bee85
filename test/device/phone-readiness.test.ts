import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  phoneReadiness,
  readinessLines,
  releaseWakeLock,
  takeWakeLock,
} from '../../device/phone/readiness.js';
import { FakeTermux, type PhoneScenario } from './fake-termux.js';

/**
 * What an Android phone needs to stay online as a controller (docs/design.md section 12.6): each missing item
 * one line that says what to do, against fake Termux:API commands first on PATH.
 */
let termux: FakeTermux | null = null;
afterEach(async () => {
  await termux?.dispose();
  termux = null;
});

async function phone(scenario: PhoneScenario, options: { bootScript?: boolean } = {}) {
  termux = await FakeTermux.create(scenario);
  if (options.bootScript ?? true) {
    const boot = join(termux.home, '.termux', 'boot');
    await mkdir(boot, { recursive: true });
    await writeFile(join(boot, 'start-gatelink'), '#!/data/data/com.termux/files/usr/bin/sh\n');
    await chmod(join(boot, 'start-gatelink'), 0o755);
  }
  return termux;
}

type Clock = { clock: { check: 'timedatectl' | 'timesyncd' | 'none'; interval_s: number } };
const ready: Clock = { clock: { check: 'none', interval_s: 30 } };

async function lines(fake: FakeTermux, config: Clock = ready, timeoutMs = 5_000): Promise<string[]> {
  return readinessLines(await phoneReadiness({ config, env: fake.env, timeoutMs }));
}

describe('phone readiness', () => {
  it('on a phone with everything, says only what Termux cannot check: battery optimisation', async () => {
    const fake = await phone('rejects');
    expect(await lines(fake)).toEqual([
      expect.stringMatching(
        /^phone: battery optimisation: unknown; not checkable from Termux: set Termux and Termux:API to Unrestricted/,
      ),
    ]);
    // The checks never call anyone.
    expect(await fake.dialled()).toEqual([]);
  });

  it('names the call log permission, the boot script and the clock check, one line each', async () => {
    const fake = await phone('log-permission', { bootScript: false });
    const said = await lines(fake, { clock: { check: 'timedatectl', interval_s: 30 } });
    expect(said).toEqual([
      expect.stringMatching(
        /^phone: call log: grant Termux:API the Call logs permission \(android\.permission\.READ_CALL_LOG\)/,
      ),
      expect.stringMatching(
        /^phone: start on boot: install Termux:Boot, open it once, and put an executable script in ~\/\.termux\/boot\//,
      ),
      expect.stringMatching(
        /^phone: clock check: clock\.check is timedatectl, which Android lacks.*set clock: check: none/,
      ),
      expect.stringMatching(/^phone: battery optimisation: unknown/),
    ]);
    for (const line of said) expect(line).not.toContain('\n');
  });

  it('a boot folder with no executable script counts as missing', async () => {
    const fake = await phone('rejects', { bootScript: false });
    await mkdir(join(fake.home, '.termux', 'boot'), { recursive: true });
    await writeFile(join(fake.home, '.termux', 'boot', 'notes.txt'), 'not a script\n');
    expect(await lines(fake)).toContainEqual(
      expect.stringMatching(/^phone: start on boot: install Termux:Boot/),
    );
  });

  it('says the SIM or the network is missing', async () => {
    const fake = await phone('no-sim');
    expect(await lines(fake)).toContainEqual(
      'phone: SIM and network: the phone has no SIM; openings fail with no_network until then',
    );
  });

  it('says to install the Termux:API app when its commands never answer', async () => {
    const fake = await phone('no-api-app');
    const said = await lines(fake, ready, 300);
    expect(said[0]).toMatch(/^phone: Termux:API: its commands get no answer: install the Termux:API app/);
    expect(said).toContainEqual(
      expect.stringMatching(/^phone: call log: unknown; Termux:API does not answer/),
    );
  });

  it("says to install Termux:API's commands when they are not on PATH", async () => {
    const fake = await phone('rejects');
    await fake.remove('termux-battery-status');
    await fake.remove('termux-call-log');
    await fake.remove('termux-telephony-deviceinfo');
    expect((await lines(fake))[0]).toBe(
      "phone: Termux:API: install Termux:API's commands: pkg install termux-api",
    );
  });

  it('takes the wake lock with termux-wake-lock and releases it with termux-wake-unlock', async () => {
    const fake = await phone('rejects');
    expect(await takeWakeLock({ env: fake.env, timeoutMs: 5_000 })).toEqual({
      item: 'wake lock',
      state: 'ready',
    });
    await releaseWakeLock({ env: fake.env, timeoutMs: 5_000 });
    expect((await fake.state()).runs.map((run) => run.command)).toEqual([
      'termux-wake-lock',
      'termux-wake-unlock',
    ]);
    await fake.remove('termux-wake-lock');
    expect(readinessLines([await takeWakeLock({ env: fake.env, timeoutMs: 5_000 })])).toEqual([
      expect.stringMatching(
        /^phone: wake lock: termux-wake-lock is not on PATH: run the controller in Termux/,
      ),
    ]);
  });
});
