import { type ChildProcess, fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import webPush from 'web-push';
import type { VapidKey } from '../../cloud/rules/vapid-key/vapid-key-file.js';
import type { BrowserSubscription } from '../support/push-service.js';
import type { FromSink, ToSink } from './push-sink.js';

/**
 * The notify benchmark's push service (push-sink.ts) as the benchmark holds it: a child process, the browsers'
 * subscriptions it hands out, what arrived there and when, and its own request rate from a plain client.
 */
const SINK = fileURLToPath(new URL('./push-sink.ts', import.meta.url));

export class PushSink {
  /** Pushes taken and decrypted since the last `clear()`. */
  arrived = 0;
  /** The first arrival of each entry, wall-clock milliseconds. */
  readonly #firstAt = new Map<number, number>();
  readonly #waiters = new Map<number, (at: number) => void>();
  readonly #perEntry = new Map<number, number>();
  #subscribed: ((subscriptions: BrowserSubscription[]) => void) | null = null;

  private constructor(
    readonly child: ChildProcess,
    readonly origin: string,
  ) {
    child.on('message', (message: FromSink) => this.#heard(message));
  }

  static async start(vapidPublicKey: string): Promise<PushSink> {
    const child = fork(SINK, [vapidPublicKey], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const origin = await new Promise<string>((resolve, reject) => {
      child.once('message', (message: FromSink) => {
        if (message.type === 'ready') resolve(message.origin);
      });
      child.once('exit', () => reject(new Error('the push sink exited')));
    });
    return new PushSink(child, origin);
  }

  #heard(message: FromSink): void {
    if (message.type === 'subscribed') this.#subscribed?.(message.subscriptions);
    if (message.type !== 'arrivals') return;
    for (const [entry, , at] of message.arrivals) {
      // The plain client's pushes (entry 0) and refused ones (-1) are no entry's.
      if (entry <= 0) continue;
      this.arrived += 1;
      this.#perEntry.set(entry, (this.#perEntry.get(entry) ?? 0) + 1);
      if (this.#firstAt.has(entry)) continue;
      this.#firstAt.set(entry, at);
      this.#waiters.get(entry)?.(at);
      this.#waiters.delete(entry);
    }
  }

  subscribe(count: number): Promise<BrowserSubscription[]> {
    return new Promise((resolve) => {
      this.#subscribed = resolve;
      this.child.send({ type: 'subscribe', count } satisfies ToSink);
    });
  }

  /** When the first push of `entry` arrived. */
  arrival(entry: number): Promise<number> {
    const at = this.#firstAt.get(entry);
    if (at !== undefined) return Promise.resolve(at);
    return new Promise((resolve) => this.#waiters.set(entry, resolve));
  }

  /** How many pushes of these entries arrived. */
  arrivedOf(entries: readonly number[]): number {
    return entries.reduce((sum, entry) => sum + (this.#perEntry.get(entry) ?? 0), 0);
  }

  clear(): void {
    this.arrived = 0;
  }

  async until(count: number, timeoutMs: number): Promise<boolean> {
    const end = performance.now() + timeoutMs;
    while (this.arrived < count && performance.now() < end) {
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return this.arrived >= count;
  }

  stop(): void {
    if (this.child.connected) this.child.disconnect();
  }
}

/** A push as the cloud sends it, made ahead: encrypted to the subscription's keys and signed for its origin. */
interface ReadyPush {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

export function readyPushes(
  subscriptions: readonly BrowserSubscription[],
  vapid: VapidKey,
  count: number,
): ReadyPush[] {
  const payload = JSON.stringify({ kind: 'opening', entry: 0, barrier: 'Bench gate', outcome: 'Opened' });
  return Array.from({ length: count }, (_, i) => {
    const subscription = subscriptions[i % subscriptions.length]!;
    const details = webPush.generateRequestDetails(subscription, payload, {
      vapidDetails: { subject: 'mailto:bench@example.com', ...vapid },
      contentEncoding: 'aes128gcm',
      TTL: 3600,
    });
    const headers = Object.fromEntries(
      Object.entries(details.headers).map(([name, value]) => [name, String(value)]),
    );
    return { path: new URL(subscription.endpoint).pathname, headers, body: details.body };
  });
}

/** The push service's own rate: the pushes POSTed from `connections` keep-alive connections. */
export async function plainRate(origin: string, pushes: readonly ReadyPush[], connections: number) {
  const { port } = new URL(origin);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let next = 0;
  const post = (push: ReadyPush) =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, method: 'POST', path: push.path, agent, headers: push.headers },
        (response) => {
          response.resume();
          response.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end(push.body);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < pushes.length) await post(pushes[next++]!);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return pushes.length / seconds;
}
