import { performance } from 'node:perf_hooks';
import { type BrowserSubscription, TestPushService } from '../support/push-service.js';

/**
 * The push service of the notify benchmark (notify.ts), in a process of its own as a browser vendor's would
 * be: the test push service (test/support/push-service.ts), which checks every request's VAPID JWT and decrypts
 * its RFC 8291 payload with the keys of the subscriptions it handed out, answering 201. It tells the parent each
 * push's entry and subscription and the moment it was taken (wall-clock milliseconds, high resolution), in
 * batches so that telling costs little; a push it refused is told with entry -1, so a run never counts one.
 */
export type ToSink = { type: 'subscribe'; count: number };
export type FromSink =
  | { type: 'ready'; origin: string }
  | { type: 'subscribed'; subscriptions: BrowserSubscription[] }
  | { type: 'arrivals'; arrivals: [entry: number, subscription: string, at: number][] };

const service = new TestPushService();
let arrivals: [number, string, number][] = [];
let flushing = false;

const flush = () => {
  flushing = false;
  if (arrivals.length === 0) return;
  process.send?.({ type: 'arrivals', arrivals } satisfies FromSink);
  arrivals = [];
};

service.answer = (push) => {
  const at = performance.timeOrigin + performance.now();
  const entry = push.problem === null && typeof push.payload?.entry === 'number' ? push.payload.entry : -1;
  arrivals.push([entry, push.subscription, at]);
  // What the service keeps of every push would only grow here: the parent has what it needs.
  service.received.length = 0;
  if (!flushing) {
    flushing = true;
    setTimeout(flush, 5);
  }
  return 201;
};

process.on('message', (message: ToSink) => {
  if (message.type !== 'subscribe') return;
  const subscriptions = Array.from({ length: message.count }, () => service.subscribe());
  process.send?.({ type: 'subscribed', subscriptions } satisfies FromSink);
});
process.on('disconnect', () => process.exit(0));

const vapidKey = process.argv[2];
if (!vapidKey) throw new Error('usage: push-sink.ts <VAPID public key>');
await service.start(vapidKey);
const origin = service.subscribe().endpoint.replace(/\/push\/.*$/, '');
process.send?.({ type: 'ready', origin } satisfies FromSink);
