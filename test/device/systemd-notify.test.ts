import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeviceConfig } from '../../device/config.js';
import { SimulatedDriver } from '../../device/drivers/simulated.js';
import { Controller } from '../../device/runtime/controller.js';
import {
  type IntervalTimers,
  SystemdNotifier,
  watchdogInterval,
} from '../../device/runtime/systemd-notify.js';
import { waitFor } from '../support/wait-for.js';
import { AedesBroker } from './aedes-broker.js';
import { DEVICE_ID, keys, makeConfig, tempDir } from './fixtures.js';
import { hasPython, NotifyListener } from './notify-listener.js';

/** Interval timers that fire only when the test ticks them: nothing here waits on the watchdog's seconds. */
function manualTimers() {
  const running = new Map<number, { callback: () => void; ms: number }>();
  let next = 1;
  const timers: IntervalTimers = {
    setInterval: (callback, ms) => {
      running.set(next, { callback, ms });
      return next++;
    },
    clearInterval: (handle) => {
      running.delete(handle as number);
    },
  };
  return {
    timers,
    intervals: () => [...running.values()].map((timer) => timer.ms),
    tick: () => {
      for (const timer of running.values()) timer.callback();
    },
  };
}

/** A notifier whose datagrams are only recorded. */
function recordingNotifier(env: Record<string, string>, healthy: () => boolean = () => true) {
  const sent: string[][] = [];
  const clock = manualTimers();
  const notifier = new SystemdNotifier({
    env,
    pid: 4242,
    send: async (assignments) => {
      sent.push([...assignments]);
    },
    timers: clock.timers,
    healthy,
  });
  return { notifier, sent, clock };
}

describe('systemd notification, in memory', () => {
  it('reads the watchdog timeout from WATCHDOG_USEC, for this process only', () => {
    expect(watchdogInterval({ WATCHDOG_USEC: '30000000' }, 1)).toBe(30_000);
    expect(watchdogInterval({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '1' }, 1)).toBe(30_000);
    expect(watchdogInterval({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '2' }, 1)).toBeNull();
    expect(watchdogInterval({ WATCHDOG_USEC: '0' }, 1)).toBeNull();
    expect(watchdogInterval({ WATCHDOG_USEC: 'soon' }, 1)).toBeNull();
    expect(watchdogInterval({}, 1)).toBeNull();
  });

  it('does nothing without NOTIFY_SOCKET, as in development and tests', async () => {
    const { notifier, sent, clock } = recordingNotifier({ WATCHDOG_USEC: '30000000' });
    expect(notifier.enabled).toBe(false);
    await notifier.startWatchdog();
    await notifier.ready('connected');
    await notifier.status('x');
    await notifier.stopping();
    expect(clock.intervals()).toEqual([]);
    expect(sent).toEqual([]);
  });

  it('pings at half the watchdog timeout, only while healthy, and not after the watchdog stops', async () => {
    let healthy = true;
    const { notifier, sent, clock } = recordingNotifier(
      { NOTIFY_SOCKET: '/run/notify', WATCHDOG_USEC: '30000000' },
      () => healthy,
    );
    await notifier.startWatchdog();
    expect(clock.intervals()).toEqual([15_000]);
    clock.tick();
    healthy = false;
    clock.tick();
    await notifier.status('flush');
    expect(sent).toEqual([['WATCHDOG=1'], ['STATUS=flush']]);
    await notifier.stopWatchdog();
    expect(clock.intervals()).toEqual([]);
  });

  it('is what the shipped unit expects: notify, a watchdog, and messages from a child process accepted', async () => {
    const unit = await readFile('hardware/gatelink-device.service', 'utf8');
    const settings = unit.split('\n').filter((line) => !line.startsWith('#'));
    expect(settings).toContain('Type=notify');
    expect(settings).toContain('WatchdogSec=30s');
    // systemd-notify, not the main process, sends the datagrams (device/runtime/systemd-notify.ts).
    expect(settings).toContain('NotifyAccess=all');
  });

  it('keeps a status on one line', async () => {
    const { notifier, sent } = recordingNotifier({ NOTIFY_SOCKET: '/run/notify' });
    await notifier.ready('two\nlines');
    expect(sent).toEqual([['READY=1', 'STATUS=two lines']]);
  });
});

describe.skipIf(!hasPython)('systemd notification through $NOTIFY_SOCKET', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let listener: NotifyListener;
  let socket: string;
  let config: DeviceConfig;
  let broker: AedesBroker;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    socket = join(dir, 'notify.sock');
    listener = await NotifyListener.open(socket);
    broker = new AedesBroker();
    await broker.start();
    const { cloud, device } = keys();
    config = await makeConfig(dir, {
      cloudKey: cloud,
      deviceKey: device,
      patch: { mqtt: { url: broker.url, username: DEVICE_ID, password: 'secret', reconnect_max_ms: 200 } },
    });
  });
  afterEach(async () => {
    await listener.close();
    await broker.stop();
    await cleanup();
  });

  it('the controller says READY=1 once started, STATUS= as the connection changes, pings, and STOPPING=1', async () => {
    const clock = manualTimers();
    const controller = new Controller(config, {
      drivers: {
        simulated: new SimulatedDriver({ objects: config.objects.filter((o) => o.kind === 'simulated') }),
      },
      clockProbe: async () => true,
      reconnectMinMs: 50,
      log: () => undefined,
      env: { NOTIFY_SOCKET: socket, WATCHDOG_USEC: '30000000', PATH: process.env.PATH },
      timers: clock.timers,
    });
    await controller.start();
    expect(clock.intervals()).toEqual([15_000]);
    await listener.received('READY=1');
    await listener.received(`STATUS=connected to ${broker.url}`);

    clock.tick();
    await listener.received('WATCHDOG=1');

    await broker.stop();
    await listener.received(
      /^STATUS=NOT connected to mqtt:\/\/127\.0\.0\.1:\d+; retrying/,
      'the lost connection',
    );

    await controller.stop();
    await listener.received('STOPPING=1');
    expect(clock.intervals()).toEqual([]);
    const order = listener.assignments.filter((a) => ['READY=1', 'STOPPING=1'].includes(a));
    expect(order).toEqual(['READY=1', 'STOPPING=1']);
    await broker.start();
  });

  it('the daemon process is ready, pings on its own, and says STOPPING=1 on SIGTERM', async () => {
    const configFile = join(dir, 'device.json');
    await writeFile(configFile, JSON.stringify({ ...config, config_file: undefined }));
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'device/main.ts', 'run', '--config', configFile],
      {
        // A 200 ms watchdog: pings every 100 ms, so the test sees one without waiting on real seconds.
        env: { ...process.env, NOTIFY_SOCKET: socket, WATCHDOG_USEC: '200000' },
        stdio: 'ignore',
      },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await listener.received('READY=1');
      await listener.received('WATCHDOG=1');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    await waitFor(() => listener.assignments.includes('STOPPING=1'), 'STOPPING=1');
  });
});
