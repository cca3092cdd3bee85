import { mkdir } from 'node:fs/promises';
import type { IClientOptions, MqttClient } from 'mqtt';
import { strictPublicKeyFromBase64 } from '../../shared/crypto/ed25519.js';
import {
  Lifecycle,
  type Part,
  StartFailed,
  StopFailed,
  type StopFailure,
} from '../../shared/lifecycle/lifecycle.js';
import { deviceTopic } from '../../shared/protocol/topics.js';
import { isUpdatableHome } from '../boot/guard.js';
import { readCaBundle } from '../broker-tls.js';
import { type DeviceConfig, publicObjects } from '../config.js';
import { type DriverOverrides, DriverSet } from '../drivers/driver-set.js';
import { ModemGsmDriver } from '../drivers/modem-gsm.js';
import { readDeviceKey } from '../keys.js';
import { readPhoneTelemetry } from '../phone/phone-telemetry.js';
import { phoneReadiness, readinessLines, releaseWakeLock, takeWakeLock } from '../phone/readiness.js';
import { realSensorClock } from '../sensors/position-sensor.js';
import { type SensorOverrides, SensorSet } from '../sensors/sensor-set.js';
import { selfCheck } from '../updates/health.js';
import { type Schedule, Updater } from '../updates/updater.js';
import { VERSION } from '../version.js';
import { ClockMonitor, type ClockProbe, clockAdvice, clockProbe } from './clock.js';
import { CommandHandler } from './commands.js';
import { ExecutedIds, removeEarlierRecords } from './executed.js';
import { Outbox } from './outbox.js';
import { PositionReporter } from './position-reporter.js';
import { Session } from './session.js';
import { StatusFile } from './status.js';
import { type IntervalTimers, type NotifySend, SystemdNotifier } from './systemd-notify.js';
import { TelemetryReporter } from './telemetry.js';

/** What tests and the demo replace; the daemon uses none of it. */
export interface ControllerDeps extends DriverOverrides, SensorOverrides {
  now?: () => number;
  clockProbe?: ClockProbe;
  connect?: (url: string, options: IClientOptions) => MqttClient;
  reconnectMinMs?: number;
  log?: (line: string) => void;
  /** Where systemd's NOTIFY_SOCKET and WATCHDOG_USEC are read; process.env by default. */
  env?: Readonly<Record<string, string | undefined>>;
  notifySend?: NotifySend;
  /** The watchdog's interval timer. */
  timers?: IntervalTimers;
  /** The installed home (docs/design.md section 12.4.3); GATELINK_HOME of `env` by default, set by the boot guard. */
  home?: string | null;
  /** Asked by an update to stop cleanly and exit, so that systemd starts `current` again. */
  onRestart?: () => void;
  /** The update's timers (health check and timeout). */
  updateSchedule?: Schedule;
}

/**
 * The controller daemon, composed from its components (each with start/stop):
 * systemd watchdog, state folder, clock monitor, phone readiness (with phone objects only), drivers (outputs
 * released), position sensors, outbox, position reports, MQTT session, command handler, telemetry, status refresh,
 * systemd readiness. `stop()` runs in reverse: systemd is told the
 * daemon is stopping, no new commands, operations in progress finish and are acknowledged, the device is marked
 * offline, then every output is made safe, and the watchdog pings last.
 */
export class Controller {
  readonly config: DeviceConfig;
  readonly drivers: DriverSet;
  readonly sensors: SensorSet;
  readonly positions: PositionReporter;
  readonly session: Session;
  readonly outbox: Outbox;
  readonly commands: CommandHandler;
  readonly clock: ClockMonitor;
  readonly telemetry: TelemetryReporter;
  readonly status: StatusFile;
  readonly systemd: SystemdNotifier;
  readonly updater: Updater;
  #driversStarted = false;
  readonly #lifecycle: Lifecycle;
  readonly #log: (line: string) => void;

  constructor(config: DeviceConfig, deps: ControllerDeps = {}) {
    const now = deps.now ?? Date.now;
    const log = deps.log ?? ((line: string) => console.log(line));
    this.#log = log;
    this.config = config;
    const commandKey = strictPublicKeyFromBase64(config.command_key);
    const deviceKey = readDeviceKey(config.private_key_file);
    const startedAt = now();
    const topic = (channel: 'ack' | 'telemetry') =>
      deviceTopic(config.topic_prefix, config.device_id, channel);

    this.status = new StatusFile({
      stateDir: config.state_dir,
      now,
      initial: {
        v: 1,
        running: true,
        pid: process.pid,
        device_id: config.device_id,
        version: VERSION,
        started_at: startedAt,
        updated_at: startedAt,
        mqtt: { url: config.mqtt.url, connected: false, since: null, last_error: null },
        clock_synced: false,
        signal: null,
        modem: null,
        outbox: 0,
        sensors: [],
        last_command: null,
      },
    });
    this.systemd = new SystemdNotifier({
      env: deps.env ?? process.env,
      send: deps.notifySend,
      timers: deps.timers,
      log,
    });
    const env = deps.env ?? process.env;
    const phoneTermux = termuxOf(config, env);
    this.drivers = new DriverSet(config, { ...deps, env, log });
    const modem = this.drivers.drivers.find((driver) => driver instanceof ModemGsmDriver);
    modem?.onState((state) => this.status.update({ modem: state }));
    this.clock = new ClockMonitor({
      probe: deps.clockProbe ?? clockProbe(config.clock.check),
      advice: clockAdvice(config.clock.check),
      intervalMs: config.clock.interval_s * 1000,
      now,
      onChange: (synced) => this.status.update({ clock_synced: synced }),
      log,
    });
    const executed = new ExecutedIds({ now });
    this.session = new Session({
      url: config.mqtt.url,
      username: config.mqtt.username,
      password: config.mqtt.password,
      keepaliveS: config.mqtt.keepalive_s,
      deviceId: config.device_id,
      topicPrefix: config.topic_prefix,
      version: VERSION,
      objects: publicObjects(config),
      arch: process.arch,
      reconnectMinMs: deps.reconnectMinMs,
      reconnectMaxMs: config.mqtt.reconnect_max_ms,
      now,
      connect: deps.connect,
      ca: config.mqtt.ca_file === undefined ? undefined : readCaBundle(config.mqtt.ca_file),
      onCommand: (payload) => this.#route(payload),
      onConnectionChange: (connected) => {
        const mqtt = this.status.current.mqtt;
        this.status.update({ mqtt: { ...mqtt, connected, since: connected ? now() : null } });
        void this.systemd.status(connectionStatus(config.mqtt.url, connected));
      },
      onConnectionError: (reason) => {
        this.status.update({ mqtt: { ...this.status.current.mqtt, last_error: reason } });
      },
      log,
    });
    this.outbox = new Outbox({
      dir: config.outbox_dir,
      deviceId: config.device_id,
      topic: topic('ack'),
      publisher: this.session,
      now,
      log,
      onSize: (size) => this.status.update({ outbox: size }),
    });
    this.sensors = new SensorSet(config, this.drivers.drivers, { ...deps, log });
    const sensorClock = deps.sensorClock ?? realSensorClock;
    this.positions = new PositionReporter({
      deviceId: config.device_id,
      deviceKey,
      sensors: this.sensors.sensors,
      outbox: this.outbox,
      clock: this.clock,
      now,
      monotonic: () => sensorClock.now(),
      idle: (object) => this.commands.idle(object),
      onPositions: (sensors) => this.status.update({ sensors: [...sensors] }),
      log,
    });
    this.commands = new CommandHandler({
      deviceId: config.device_id,
      commandKey,
      deviceKey,
      objects: config.objects,
      driverFor: (object) => this.drivers.driverFor(object),
      executed,
      clock: this.clock,
      now,
      deliver: (ack) => this.outbox.put(ack),
      onResult: (result) => this.status.update({ last_command: result }),
      log,
    });
    this.telemetry = new TelemetryReporter({
      publisher: this.session,
      topic: topic('telemetry'),
      deviceId: config.device_id,
      version: VERSION,
      intervalMs: config.telemetry.interval_s * 1000,
      now,
      startedAt,
      signal: () => this.drivers.signalQuality(),
      clockSynced: () => this.clock.synced,
      outboxSize: () => this.outbox.size,
      ...(phoneTermux ? { phone: () => readPhoneTelemetry(phoneTermux) } : {}),
      log,
    });
    const home = deps.home === undefined ? (env.GATELINK_HOME ?? null) : deps.home;
    this.updater = new Updater({
      home: home !== null && isUpdatableHome(home) ? home : null,
      deviceId: config.device_id,
      commandKey,
      releaseKey: config.release_key === undefined ? null : strictPublicKeyFromBase64(config.release_key),
      deviceKey,
      cloudUrl: config.cloud_url,
      ca: config.mqtt.ca_file === undefined ? undefined : readCaBundle(config.mqtt.ca_file),
      version: VERSION,
      arch: process.arch,
      nodeAbi: process.versions.modules,
      healthTimeoutMs: config.updates.health_timeout_s * 1000,
      schedule: deps.updateSchedule,
      probe: {
        connected: () => this.session.connected,
        driversStarted: () => this.#driversStarted,
        selfCheck: () => selfCheck(deviceKey, config.state_dir),
      },
      now,
      holdCommands: () => this.commands.hold(),
      resumeCommands: () => this.commands.resume(),
      report: (report) => this.session.setUpdate(report),
      restart: deps.onRestart ?? (() => log('update: restart asked, but nothing restarts this controller')),
      log,
    });
    this.session.onConnect(() => {
      this.updater.checkHealth();
      this.positions.reportCurrent();
      void this.outbox.flush();
      void this.telemetry.publishNow();
    });
    const statusTimer = {
      timer: null as ReturnType<typeof setInterval> | null,
    };

    this.#lifecycle = new Lifecycle([
      // Pings from the first step on: a start that hangs (a modem that never answers) is restarted too.
      {
        name: 'systemd watchdog',
        start: () => this.systemd.startWatchdog(),
        stop: () => this.systemd.stopWatchdog(),
      },
      {
        name: 'state folder',
        start: async () => {
          await mkdir(config.state_dir, { recursive: true, mode: 0o700 });
          await removeEarlierRecords(config.state_dir);
          await this.status.write();
        },
        stop: async () => undefined,
      },
      this.#named('clock', this.clock),
      ...(phoneTermux ? [phonePart(config, phoneTermux, log)] : []),
      {
        name: 'drivers',
        start: async () => {
          await this.drivers.start();
          this.#driversStarted = true;
        },
        stop: () => this.drivers.stop(),
      },
      // After the drivers: a simulated sensor follows its driver's pulses; stopped before them, so that the
      // outputs made safe last are not read as a gate moving.
      this.#named('sensors', this.sensors),
      this.#named('outbox', this.outbox),
      // After the sensors and the outbox it reads and fills; stopped before the outbox, so that the reports on
      // their way are on disk when it closes.
      this.#named('position reports', this.positions),
      this.#named('mqtt session', this.session),
      // Stopped before the session, so that operations in progress are acknowledged while still connected.
      { name: 'commands', start: async () => undefined, stop: () => this.commands.stop() },
      this.#named('telemetry', this.telemetry),
      // After the commands in the order of start: its health watch needs the drivers and the session started.
      this.#named('updates', this.updater),
      {
        name: 'status',
        start: async () => {
          // The signal quality changes without an event; refresh it with the telemetry.
          statusTimer.timer = setInterval(
            () => this.status.update({ signal: this.drivers.signalQuality() }),
            config.telemetry.interval_s * 1000,
          );
          statusTimer.timer.unref?.();
        },
        stop: async () => {
          if (statusTimer.timer) clearInterval(statusTimer.timer);
        },
      },
      // Ready once the outputs are safe and the session is connecting, not once it is connected: a broker out of
      // reach for minutes must not make systemd fail the start (hardware/README.md, "The daemon under systemd").
      {
        name: 'systemd readiness',
        start: () => this.systemd.ready(connectionStatus(config.mqtt.url, this.session.connected)),
        stop: () => this.systemd.stopping(),
      },
    ]);
  }

  /**
   * Starts the components in order (shared/lifecycle/lifecycle.ts). If one fails, those started are stopped
   * in reverse, the daemon is marked stopped, and the failure, naming the component, is passed on.
   */
  async start(): Promise<void> {
    try {
      await this.#lifecycle.start();
    } catch (error) {
      if (error instanceof StartFailed) {
        this.#log(`start: ${error.part} failed: ${messageOf(error.cause)}`);
        this.#logStopFailures(error.unwinding);
      }
      await this.#markStopped();
      throw error;
    }
  }

  /**
   * Stops the components in reverse, each even when one before it fails: the daemon is ending, so a failure is
   * written to the log (the journal, under systemd) rather than thrown, and the status file still says so.
   */
  async stop(): Promise<void> {
    try {
      await this.#lifecycle.stop();
    } catch (error) {
      if (!(error instanceof StopFailed)) throw error;
      this.#logStopFailures(error.failures);
    }
    await this.#markStopped();
  }

  /** The `cmd` topic carries openings and updates: the action decides which handler takes it. */
  #route(payload: Buffer): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload.toString());
    } catch {
      parsed = null;
    }
    const isUpdate =
      parsed !== null && typeof parsed === 'object' && (parsed as { action?: unknown }).action === 'update';
    if (isUpdate) {
      this.updater.handle(parsed).catch((error: Error) => this.#log(`update: failed: ${error.message}`));
      return;
    }
    this.commands.handle(payload).catch((error: Error) => this.#log(`command: failed: ${error.message}`));
  }

  #logStopFailures(failures: readonly StopFailure[]): void {
    for (const failure of failures) this.#log(`stop: ${failure.part}: ${messageOf(failure.error)}`);
  }

  async #markStopped(): Promise<void> {
    this.status.update({
      running: false,
      mqtt: { ...this.status.current.mqtt, connected: false, since: null },
    });
    await this.status.write().catch(() => undefined);
  }

  #named(name: string, component: { start(): Promise<void>; stop(): Promise<void> }): Part {
    return { name, start: () => component.start(), stop: () => component.stop() };
  }
}

/** How Termux:API's commands run, for a config with phone objects; null without (docs/design.md section 12.6). */
function termuxOf(config: DeviceConfig, env: Readonly<Record<string, string | undefined>>) {
  const phones = config.objects.filter((object) => object.kind === 'phone');
  if (phones.length === 0) return null;
  return { env, timeoutMs: Math.max(...phones.map((object) => object.command_timeout_ms)) };
}

/**
 * A phone controller's start: the wake lock first, then what Android needs for a controller that stays online,
 * one line for each item missing (device/phone/readiness.ts). It starts anyway: a phone that will not start on
 * boot still opens today. The lock is released at stop.
 */
function phonePart(
  config: DeviceConfig,
  termux: { env: Readonly<Record<string, string | undefined>>; timeoutMs: number },
  log: (line: string) => void,
): Part {
  return {
    name: 'phone readiness',
    start: async () => {
      const lock = await takeWakeLock(termux);
      const items = await phoneReadiness({ ...termux, config });
      for (const line of readinessLines([lock, ...items])) log(line);
    },
    stop: () => releaseWakeLock(termux),
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The STATUS= line `systemctl status` shows; the broker address without any credentials in it. */
export function connectionStatus(url: string, connected: boolean): string {
  const broker = withoutCredentials(url);
  return connected
    ? `connected to ${broker}`
    : `NOT connected to ${broker}; retrying (check the network and the broker)`;
}

function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.href.replace(/\/$/, '');
  } catch {
    return url;
  }
}
