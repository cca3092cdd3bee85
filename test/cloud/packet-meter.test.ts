import { describe, expect, it } from 'vitest';
import { PacketMeter } from '../../cloud/links/controllers/packet-meter.js';
import { fixedHeader } from '../support/raw-mqtt.js';

/** A packet of `remaining` body bytes after its fixed header, as the broker receives it. */
const packet = (first: number, remaining: number) =>
  Buffer.concat([fixedHeader(first, remaining), Buffer.alloc(remaining, 0x61)]);

/** Feeds `bytes` in pieces of `size` and collects what the meter reports for each. */
function feed(bytes: Buffer, size: number): number[] {
  const meter = new PacketMeter();
  const seen: number[] = [];
  for (let at = 0; at < bytes.length; at += size) seen.push(meter.largestIn(bytes.subarray(at, at + size)));
  return seen;
}

describe('the packet meter', () => {
  // Remaining Length boundaries of MQTT 3.1.1 section 2.2.3: one to four bytes.
  const sizes = [
    { remaining: 0, header: 2 },
    { remaining: 127, header: 2 },
    { remaining: 128, header: 3 },
    { remaining: 16_383, header: 3 },
    { remaining: 16_384, header: 4 },
    { remaining: 2_097_152, header: 5 },
  ];
  it.each(sizes)(
    'reads a Remaining Length of $remaining in $header header bytes',
    ({ remaining, header }) => {
      expect(new PacketMeter().largestIn(fixedHeader(0x30, remaining))).toBe(header + remaining);
    },
  );

  it('knows the size a packet declares from its header alone, before its body arrives', () => {
    expect(new PacketMeter().largestIn(fixedHeader(0x10, 199 * 1024 * 1024).subarray(0, 5))).toBe(
      5 + 199 * 1024 * 1024,
    );
  });

  it('follows packets across chunks of any size, a header split between two included', () => {
    const stream = Buffer.concat([
      packet(0x10, 40),
      packet(0x30, 300),
      packet(0xc0, 0),
      packet(0x30, 20_000),
    ]);
    for (const size of [1, 2, 3, 7, 64, 1024, stream.length]) {
      const seen = feed(stream, size);
      expect({ size, largest: Math.max(...seen) }).toEqual({ size, largest: 4 + 20_000 });
    }
    const byByte = feed(stream, 1).filter((bytes) => bytes > 0);
    expect(byByte).toEqual([42, 303, 2, 20_004]);
  });

  it('reports a Remaining Length running past four bytes as malformed, and keeps saying so', () => {
    const meter = new PacketMeter();
    expect(meter.largestIn(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01]))).toBe(Number.POSITIVE_INFINITY);
    expect(meter.largestIn(packet(0xc0, 0))).toBe(Number.POSITIVE_INFINITY);
  });
});
