import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readPhoneTelemetry } from '../../device/phone/phone-telemetry.js';
import { runTermux } from '../../device/phone/termux-command.js';
import type { Publisher } from '../../device/runtime/outbox.js';
import { TelemetryReporter } from '../../device/runtime/telemetry.js';
import { telemetrySchema } from '../../shared/protocol/messages.js';
import { FakeTermux } from './fake-termux.js';
import { DEVICE_ID, tempDir } from './fixtures.js';

/**
 * The phone's battery and network in telemetry (docs/design.md section 12.6): read from Termux:API only for a
 * controller with phone objects, validated, bounded, and absent when they cannot be read.
 */
let termux: FakeTermux | null = null;
afterEach(async () => {
  await termux?.dispose();
  termux = null;
});

/** A publisher that keeps what the reporter sends. */
function publisher(): Publisher & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    connected: true,
    publish: async (_topic: string, payload: string | Buffer) => {
      sent.push(payload.toString());
    },
  } as Publisher & { sent: string[] };
}

function reporter(out: Publisher, phone?: () => ReturnType<typeof readPhoneTelemetry>) {
  return new TelemetryReporter({
    publisher: out,
    topic: 'test/D0123456789/telemetry',
    deviceId: DEVICE_ID,
    version: '0.1.0',
    intervalMs: 60_000,
    now: () => 1_800_000_000_000,
    startedAt: 1_800_000_000_000,
    signal: () => null,
    clockSynced: () => true,
    outboxSize: () => 0,
    ...(phone ? { phone } : {}),
  });
}

describe('phone telemetry', () => {
  it('reads the battery and the network and sends them as the cloud parses them', async () => {
    termux = await FakeTermux.create('rejects');
    const env = termux.env;
    const out = publisher();
    await reporter(out, () => readPhoneTelemetry({ env, timeoutMs: 5_000 })).publishNow();
    const sent = telemetrySchema.parse(JSON.parse(out.sent[0] ?? ''));
    expect(sent.battery).toEqual({ percentage: 87, plugged: false, temperature: 27.5 });
    expect(sent.network).toEqual({ sim: 'ready', operator: 'Telekom.de', type: 'lte' });
  });

  it('reads a charger as plugged, and a phone in airplane mode without an operator', async () => {
    termux = await FakeTermux.create('airplane');
    await termux.set({ plugged: 'PLUGGED_USB', percentage: 100 });
    const reading = await readPhoneTelemetry({ env: termux.env, timeoutMs: 5_000 });
    expect(reading).toEqual({
      battery: { percentage: 100, plugged: true, temperature: 27.5 },
      network: { sim: 'ready', type: 'unknown' },
    });
  });

  it('leaves out a battery reading out of bounds rather than sending it', async () => {
    termux = await FakeTermux.create('rejects');
    await termux.set({ percentage: 250 });
    expect((await readPhoneTelemetry({ env: termux.env, timeoutMs: 5_000 })).battery).toBeUndefined();
  });

  it('sends neither field when Termux:API does not answer', async () => {
    termux = await FakeTermux.create('no-api-app');
    expect(await readPhoneTelemetry({ env: termux.env, timeoutMs: 300 })).toEqual({});
  });

  it('sends neither field from a controller without phone objects', async () => {
    const out = publisher();
    await reporter(out).publishNow();
    const sent = JSON.parse(out.sent[0] ?? '') as Record<string, unknown>;
    expect(telemetrySchema.safeParse(sent).success).toBe(true);
    expect(Object.keys(sent)).not.toContain('battery');
    expect(Object.keys(sent)).not.toContain('network');
  });
});

describe('Termux commands', () => {
  it('gives up at the timeout even when the killed command left a child holding its output', async () => {
    // As termux-api does: the script forks, and its child waits for an app that is not there.
    const { dir, cleanup } = await tempDir();
    try {
      const script = join(dir, 'termux-hangs');
      await writeFile(script, '#!/bin/sh\nsleep 30 &\nwait\n');
      await chmod(script, 0o755);
      const started = Date.now();
      const result = await runTermux('termux-hangs', [], {
        timeoutMs: 300,
        env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` },
      });
      expect(result).toEqual({ kind: 'timeout' });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await cleanup();
    }
  });

  it('stops reading a command that prints more than it should', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const script = join(dir, 'termux-floods');
      await writeFile(script, '#!/bin/sh\nhead -c 200000 /dev/zero | tr "\\\\0" x\n');
      await chmod(script, 0o755);
      const result = await runTermux('termux-floods', [], {
        timeoutMs: 5_000,
        env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` },
      });
      expect(result).toMatchObject({
        kind: 'failed',
        detail: expect.stringMatching(/more than 65536 bytes/),
      });
    } finally {
      await cleanup();
    }
  });
});
