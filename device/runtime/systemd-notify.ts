import { execFile } from 'node:child_process';

/**
 * Readiness, status and watchdog for systemd's `Type=notify` (sd_notify(3)), composed into the controller's
 * start and stop (hardware/README.md, "The daemon under systemd").
 *
 * The protocol is one datagram of `NAME=value` lines to the Unix datagram socket named by $NOTIFY_SOCKET. Node
 * cannot send on a Unix datagram socket (`dgram` speaks UDP only) and no package installed here can without a
 * native addon, so each message goes through `systemd-notify`, which ships with systemd and waits until the
 * manager has read the message (sd_notify_barrier, systemd 246 and later). The sender is then a child of the
 * daemon, which is why the unit says `NotifyAccess=all`. Without $NOTIFY_SOCKET (development, tests, `test`
 * and `status` commands) every method does nothing.
 */

/** Sends one message: the assignments of one datagram, in order. */
export type NotifySend = (assignments: readonly string[]) => Promise<void>;

/** The interval timer the watchdog uses; injected so that tests tick it by hand. */
export interface IntervalTimers {
  setInterval(callback: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export interface SystemdNotifierOptions {
  /** Where NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID are read. */
  env: Readonly<Record<string, string | undefined>>;
  /** By default `systemd-notify` with the socket from `env`. */
  send?: NotifySend;
  timers?: IntervalTimers;
  pid?: number;
  /** Asked before each ping: a daemon that is not healthy lets the watchdog expire, and systemd restarts it. */
  healthy?: () => boolean;
  log?: (line: string) => void;
}

const nodeTimers: IntervalTimers = {
  setInterval: (callback, ms) => setInterval(callback, ms),
  clearInterval: (handle) => clearInterval(handle as ReturnType<typeof setInterval>),
};

export class SystemdNotifier {
  /** The ping interval: half of WatchdogSec=, as sd_watchdog_enabled(3) advises; null without a watchdog. */
  readonly pingMs: number | null;
  readonly #send: NotifySend | null;
  readonly #timers: IntervalTimers;
  readonly #healthy: () => boolean;
  readonly #log: (line: string) => void;
  #queue: Promise<void> = Promise.resolve();
  #pinger: unknown = null;
  #failed = false;

  constructor(options: SystemdNotifierOptions) {
    const socket = options.env.NOTIFY_SOCKET;
    this.#send = socket ? (options.send ?? systemdNotifySend(socket, options.env.PATH)) : null;
    const watchdogMs = socket ? watchdogInterval(options.env, options.pid ?? process.pid) : null;
    this.pingMs = watchdogMs === null ? null : Math.max(1, Math.floor(watchdogMs / 2));
    this.#timers = options.timers ?? nodeTimers;
    this.#healthy = options.healthy ?? (() => true);
    this.#log = options.log ?? (() => undefined);
  }

  get enabled(): boolean {
    return this.#send !== null;
  }

  /**
   * Starts the pings. They come from a timer on the event loop, so a loop that stops turning stops them, and
   * systemd kills and restarts the daemon (hardware/README.md: the relay is released on start).
   */
  async startWatchdog(): Promise<void> {
    if (this.pingMs === null || this.#pinger !== null) return;
    this.#pinger = this.#timers.setInterval(() => this.#ping(), this.pingMs);
    (this.#pinger as { unref?: () => void }).unref?.();
  }

  async stopWatchdog(): Promise<void> {
    if (this.#pinger === null) return;
    this.#timers.clearInterval(this.#pinger);
    this.#pinger = null;
  }

  /** READY=1 with the first status line. */
  ready(status: string): Promise<void> {
    return this.#notify(['READY=1', statusLine(status)]);
  }

  /** A status line for `systemctl status`; queued behind earlier messages so they arrive in order. */
  status(status: string): Promise<void> {
    return this.#notify([statusLine(status)]);
  }

  /** STOPPING=1: systemd shows the unit deactivating while the outputs are released. */
  stopping(status = 'stopping: finishing openings and releasing the outputs'): Promise<void> {
    return this.#notify(['STOPPING=1', statusLine(status)]);
  }

  #ping(): void {
    if (this.#healthy()) void this.#notify(['WATCHDOG=1']);
  }

  #notify(assignments: readonly string[]): Promise<void> {
    const send = this.#send;
    if (!send) return Promise.resolve();
    this.#queue = this.#queue.then(() =>
      send(assignments).catch((error: Error) => {
        // Once is enough in the journal: every later ping would fail the same way.
        if (this.#failed) return;
        this.#failed = true;
        this.#log(`systemd: cannot notify (${error.message}); is systemd-notify installed?`);
      }),
    );
    return this.#queue;
  }
}

/** The watchdog timeout in milliseconds, or null when there is none for this process (sd_watchdog_enabled). */
export function watchdogInterval(
  env: Readonly<Record<string, string | undefined>>,
  pid: number,
): number | null {
  const usec = Number(env.WATCHDOG_USEC);
  if (!Number.isSafeInteger(usec) || usec <= 0) return null;
  if (env.WATCHDOG_PID !== undefined && Number(env.WATCHDOG_PID) !== pid) return null;
  return Math.floor(usec / 1000);
}

/** A datagram is a list of lines, so a status must be one line. */
function statusLine(status: string): string {
  return `STATUS=${status.replace(/[\r\n]+/g, ' ')}`;
}

/** Sends through `systemd-notify NAME=value...`, with only the socket and PATH in its environment. */
export function systemdNotifySend(socket: string, path = '/usr/bin:/bin'): NotifySend {
  return (assignments) =>
    new Promise((resolve, reject) => {
      execFile(
        'systemd-notify',
        [...assignments],
        { env: { NOTIFY_SOCKET: socket, PATH: path }, timeout: 5000 },
        (error) => (error ? reject(error) : resolve()),
      );
    });
}
