import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import type { PublishPacket } from 'aedes';
import type { AedesMemoryPersistence } from 'aedes-persistence';

/** aedes's memory persistence, a CommonJS function whose types declare it as an ES default export. */
const memoryPersistence = createRequire(import.meta.url)('aedes-persistence') as () => AedesMemoryPersistence;

/**
 * The embedded broker's memory persistence with its retained messages kept by topic (docs/design.md section
 * 7.1). aedes's own store answers every SUBSCRIBE by testing each retained message against the filter, and each
 * device leaves a retained `state`: with N devices connected, the next one's subscription costs N tests, and a
 * fleet reconnecting costs N². A device subscribes only to its own topic, without wildcards, which is one
 * lookup here; a filter with wildcards is still tested against each retained topic.
 */
export function indexedMemoryPersistence(): AedesMemoryPersistence {
  const persistence = memoryPersistence();
  const retained = new Map<string, PublishPacket>();
  function* matching(filters: readonly string[]): Generator<PublishPacket> {
    for (const filter of filters) {
      if (!filter.includes('+') && !filter.includes('#')) {
        const packet = retained.get(filter);
        if (packet) yield packet;
        continue;
      }
      for (const [topic, packet] of retained) if (topicMatches(filter, topic)) yield packet;
    }
  }
  return Object.assign(persistence, {
    // aedes 1.x awaits the promise; the callback form is the persistence interface's older one.
    storeRetained(packet: PublishPacket, done?: (error: null) => void): Promise<void> | undefined {
      if (packet.payload.length === 0) retained.delete(packet.topic);
      else retained.set(packet.topic, { ...packet });
      if (!done) return Promise.resolve();
      done(null);
      return undefined;
    },
    createRetainedStream: (filter: string) => Readable.from(matching([filter])),
    createRetainedStreamCombi: (filters: string[]) => Readable.from(matching(filters)),
  });
}

/**
 * Whether a topic filter matches a topic name (MQTT 3.1.1 section 4.7): `+` is one level, a final `#` is any
 * number of levels including none, and neither matches a first level that begins with `$` [MQTT-4.7.2-1].
 */
export function topicMatches(filter: string, topic: string): boolean {
  if (topic.startsWith('$') && (filter.startsWith('+') || filter.startsWith('#'))) return false;
  const wanted = filter.split('/');
  const levels = topic.split('/');
  for (let i = 0; i < wanted.length; i++) {
    if (wanted[i] === '#') return i === wanted.length - 1;
    if (i >= levels.length) return false;
    if (wanted[i] !== '+' && wanted[i] !== levels[i]) return false;
  }
  return wanted.length === levels.length;
}
