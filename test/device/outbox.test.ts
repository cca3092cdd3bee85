import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  countWaiting,
  OUTBOX_LOG,
  Outbox,
  type OutboxOptions,
  type Publisher,
  replay,
} from '../../device/runtime/outbox.js';
import type { SigningKey } from '../../shared/crypto/ed25519.js';
import { type Ack, PROTOCOL_VERSION } from '../../shared/protocol/messages.js';
import {
  type PositionReport,
  positionBundleSchema,
  signPositionReport,
} from '../../shared/protocol/positions.js';
import { signAck } from '../../shared/protocol/signing.js';
import { DEVICE_ID, fakeClock, keys, tempDir } from './fixtures.js';

/** Plays the MQTT session: records what is published; offline, or failing, when the test says so. */
class FakePublisher {
  connected = true;
  /** Payloads the broker confirmed, in order. */
  readonly sent: string[] = [];
  /**
   * Called with each payload before it is confirmed; throwing makes the publish fail as a dropped
   * connection does: this one and every one after it, until the test connects again.
   */
  onPublish: (payload: string) => void = () => undefined;

  async publish(_topic: string, payload: string, options: { qos: 0 | 1 }): Promise<void> {
    if (options.qos !== 1) throw new Error('acknowledgements go at QoS 1');
    if (!this.connected) throw new Error('not connected');
    try {
      this.onPublish(payload);
    } catch (error) {
      this.connected = false;
      throw error;
    }
    this.sent.push(payload);
  }

  sentIds(): string[] {
    return this.sent.map((payload) => (JSON.parse(payload) as Ack).command_id);
  }
}

/** A session whose broker answers when the test says so, as the cloud's does once the journal holds an ack. */
class HeldPublisher {
  connected = true;
  /** Payloads published and not answered yet, in the order published, with how to answer them. */
  readonly waiting: { payload: string; answer: () => void; fail: (error: Error) => void }[] = [];

  publish(_topic: string, payload: string): Promise<void> {
    if (!this.connected) return Promise.reject(new Error('not connected'));
    return new Promise((answer, fail) => this.waiting.push({ payload, answer, fail }));
  }

  waitingIds(): string[] {
    return this.waiting.map((each) => (JSON.parse(each.payload) as Ack).command_id);
  }

  /** The connection drops: every publish in flight fails. */
  drop(): void {
    this.connected = false;
    for (const each of this.waiting.splice(0)) each.fail(new Error('the connection to the broker closed'));
  }
}

describe('outbox', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let device: SigningKey;
  let clock: ReturnType<typeof fakeClock>;
  let outboxes: Outbox[];
  let logs: string[];

  const ack = (commandId: string = randomUUID(), outcome: Ack['outcome'] = 'opened'): Ack =>
    signAck(device, {
      v: PROTOCOL_VERSION,
      command_id: commandId,
      device_id: DEVICE_ID,
      outcome,
      ...(outcome === 'refused' ? { reason: 'duplicate' as const } : {}),
      received_at: clock.now(),
      finished_at: clock.now(),
    });

  const report = (position: PositionReport['position'] = 'open'): PositionReport =>
    signPositionReport(device, {
      v: PROTOCOL_VERSION,
      type: 'position',
      id: randomUUID(),
      device_id: DEVICE_ID,
      object: 'gate',
      position,
      changed_at: clock.now(),
      at: clock.now(),
    });
  /** The key each sent payload is confirmed by: a command id, or a report's id. */
  const keysOf = (payloads: readonly string[]) =>
    payloads.map((payload) => {
      const message = JSON.parse(payload) as Ack | PositionReport;
      return 'type' in message ? `report ${message.id}` : `ack ${message.command_id}`;
    });

  /** An outbox on `dir`; a second one on the same folder is the controller after a restart or a crash. */
  const outbox = (publisher: Publisher, options: Partial<OutboxOptions> = {}) => {
    const created = new Outbox({
      dir,
      deviceId: DEVICE_ID,
      // Each report at once, alone, unless a test says otherwise (the linger has tests of its own).
      reportLingerMs: 0,
      topic: 'test/dev/D0123456789/ack',
      publisher,
      now: clock.now,
      log: (line) => logs.push(line),
      ...options,
    });
    outboxes.push(created);
    return created;
  };
  const started = async (publisher: FakePublisher, options: Partial<OutboxOptions> = {}) => {
    const created = outbox(publisher, options);
    await created.start();
    await created.flush();
    return created;
  };
  const logFile = () => join(dir, OUTBOX_LOG);
  const logLines = async () => (await readFile(logFile(), 'utf8')).split('\n').filter((line) => line !== '');

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    device = keys().device;
    clock = fakeClock();
    outboxes = [];
    logs = [];
  });
  afterEach(async () => {
    for (const created of outboxes) await created.stop();
    await cleanup();
  });

  it('has each acknowledgement in its log before it tries to send it, and forgets it once confirmed', async () => {
    const publisher = new FakePublisher();
    const box = await started(publisher);
    const seen: { inLog: boolean; size: number }[] = [];
    publisher.onPublish = (payload) => {
      // What a crash at this moment would leave behind.
      const lines = readFileSync(logFile(), 'utf8').split('\n').slice(0, -1);
      seen.push({ inLog: replay(lines).entries.some((entry) => entry.payload === payload), size: box.size });
    };
    const a = ack();
    await box.put(a);
    await box.flush();
    expect(seen).toEqual([{ inLog: true, size: 1 }]);
    expect(publisher.sentIds()).toEqual([a.command_id]);
    expect(box.size).toBe(0);
    await box.stop();
    expect(await logLines()).toEqual([`P ${JSON.stringify(a)}`, `D ${a.command_id}`]);
  });

  it('writes that an acknowledgement was sent without a flush of its own: in front of the next one', async () => {
    const publisher = new FakePublisher();
    const box = await started(publisher);
    const [a, b] = [ack(), ack()];
    await box.put(a);
    await box.flush();
    expect(await logLines()).toEqual([`P ${JSON.stringify(a)}`]);
    publisher.connected = false;
    await box.put(b);
    expect(await logLines()).toEqual([
      `P ${JSON.stringify(a)}`,
      `D ${a.command_id}`,
      `P ${JSON.stringify(b)}`,
    ]);
  });

  it('sends an acknowledgement again after a power cut lost the record that it was sent', async () => {
    const publisher = new FakePublisher();
    const first = await started(publisher);
    const a = ack();
    await first.put(a);
    await first.flush();
    // No stop: the power is cut before anything else was written.

    const after = new FakePublisher();
    await started(after);
    expect(after.sentIds()).toEqual([a.command_id]);
  });

  it('sends in the order written and keeps what the broker did not confirm', async () => {
    const publisher = new FakePublisher();
    const box = await started(publisher);
    const [a, b, c] = [ack(), ack(), ack()];
    publisher.onPublish = (payload) => {
      if (payload.includes(b.command_id)) throw new Error('connection lost');
    };
    await box.put(a);
    await box.put(b);
    await box.put(c);
    await box.flush();
    expect(publisher.sentIds()).toEqual([a.command_id]);
    expect(box.size).toBe(2);
    expect(logs.some((line) => line.includes(`${b.command_id} not sent yet`))).toBe(true);

    publisher.onPublish = () => undefined;
    publisher.connected = true;
    await box.flush();
    expect(publisher.sentIds()).toEqual([a.command_id, b.command_id, c.command_id]);
    expect(box.size).toBe(0);
  });

  it("sends an acknowledgement without waiting for the broker's answer to the one before", async () => {
    const publisher = new HeldPublisher();
    const box = outbox(publisher);
    await box.start();
    const [a, b] = [ack(), ack()];
    await box.put(a);
    await box.put(b);
    expect(publisher.waitingIds()).toEqual([a.command_id, b.command_id]);
    expect(box.size).toBe(2);
    for (const each of publisher.waiting.splice(0)) each.answer();
    await box.flush();
    expect(box.size).toBe(0);
  });

  it('sends again, in order, every acknowledgement whose send a dropped connection cut off', async () => {
    const publisher = new HeldPublisher();
    const box = outbox(publisher);
    await box.start();
    const [a, b, c] = [ack(), ack(), ack()];
    await box.put(a);
    await box.put(b);
    publisher.waiting.shift()!.answer();
    publisher.drop();
    await box.put(c);
    await box.flush();
    expect(box.size).toBe(2);
    expect(logs.filter((line) => line.includes('not sent yet'))).toHaveLength(1);

    publisher.connected = true;
    const flushed = box.flush();
    expect(publisher.waitingIds()).toEqual([b.command_id, c.command_id]);
    for (const each of publisher.waiting.splice(0)) each.answer();
    await flushed;
    expect(box.size).toBe(0);
    await box.stop();
    expect(await countWaiting(dir)).toBe(0);
  });

  it('replays after a restart what was not confirmed, in order, and not what was', async () => {
    const publisher = new FakePublisher();
    const sizes: number[] = [];
    const first = await started(publisher, { onSize: (size) => sizes.push(size) });
    const [a, b, c, d] = [ack(), ack(), ack(), ack()];
    await first.put(a);
    await first.flush();
    publisher.connected = false;
    for (const each of [b, c, d]) await first.put(each);
    expect(first.size).toBe(3);
    expect(sizes.at(-1)).toBe(3);
    expect(await countWaiting(dir)).toBe(3);
    // No stop: the process is killed here.

    const after = new FakePublisher();
    const second = await started(after);
    expect(after.sentIds()).toEqual([b.command_id, c.command_id, d.command_id]);
    expect(second.size).toBe(0);
    await second.stop();
    expect(await countWaiting(dir)).toBe(0);
  });

  it('carries acknowledgements and position reports in one queue, in order, across a restart', async () => {
    const publisher = new FakePublisher();
    const first = await started(publisher);
    const [a, opened, b, closed] = [ack(), report('open'), ack(), report('closed')];
    await first.put(a);
    await first.put(opened);
    await first.flush();
    publisher.connected = false;
    await first.put(b);
    await first.put(closed);
    expect(await countWaiting(dir)).toBe(2);
    // No stop: the process is killed here.

    const after = new FakePublisher();
    const second = await started(after);
    expect(keysOf(publisher.sent)).toEqual([`ack ${a.command_id}`, `report ${opened.id}`]);
    expect(keysOf(after.sent)).toEqual([`ack ${b.command_id}`, `report ${closed.id}`]);
    expect(JSON.parse(after.sent[1]!)).toEqual(closed);
    await second.stop();
    expect(await countWaiting(dir)).toBe(0);
  });

  it("writes a report put lazily with the next acknowledgement's record, ahead of it", async () => {
    const publisher = new FakePublisher();
    publisher.connected = false;
    const first = await started(publisher);
    const [opened, a] = [report('open'), ack()];
    await first.put(opened, { lazy: true });
    expect(await countWaiting(dir)).toBe(0);
    await first.put(a);
    expect(await countWaiting(dir)).toBe(2);
    // No stop: the process is killed here.

    const after = new FakePublisher();
    await started(after);
    expect(keysOf(after.sent)).toEqual([`report ${opened.id}`, `ack ${a.command_id}`]);
  });

  it('writes a lazy report at stop when no acknowledgement took it to the disk', async () => {
    const publisher = new FakePublisher();
    publisher.connected = false;
    const first = await started(publisher);
    await first.put(report('closed'), { lazy: true });
    await first.stop();
    expect(await countWaiting(dir)).toBe(1);
  });

  /** Timers the test runs by hand: the reports' linger. */
  const handTimers = () => {
    const due: (() => void)[] = [];
    return {
      timers: {
        set: (run: () => void) => due.push(run),
        clear: (timer: unknown) => {
          due[(timer as number) - 1] = () => undefined;
        },
      },
      /** Runs every timer set so far, as if its time had come. */
      fire: () => {
        for (const run of due.splice(0)) run();
      },
    };
  };

  it('lets reports wait for others and sends them in one message, while acknowledgements go at once', async () => {
    const publisher = new FakePublisher();
    const { timers, fire } = handTimers();
    const box = await started(publisher, { reportLingerMs: 100, timers });
    const [opened, a, closed, b] = [report('open'), ack(), report('closed'), ack()];
    await box.put(opened, { lazy: true });
    await box.put(a);
    await box.put(closed, { lazy: true });
    await box.put(b);
    await box.flush();
    expect(keysOf(publisher.sent)).toEqual([`ack ${a.command_id}`, `ack ${b.command_id}`]);

    fire();
    await box.flush();
    expect(publisher.sent).toHaveLength(3);
    const bundle = positionBundleSchema.parse(JSON.parse(publisher.sent[2]!));
    expect(bundle.device_id).toBe(DEVICE_ID);
    // The signed texts as they were made: each verifies on its own.
    expect(bundle.reports).toEqual([opened, closed]);
    expect(box.size).toBe(0);
    await box.stop();
    expect(await countWaiting(dir)).toBe(0);
  });

  it('sends a lone report as it is, and at most 32 reports in one message', async () => {
    const publisher = new FakePublisher();
    const { timers, fire } = handTimers();
    const box = await started(publisher, { reportLingerMs: 100, timers });
    const alone = report('open');
    await box.put(alone, { lazy: true });
    fire();
    await box.flush();
    expect(publisher.sent.map((payload) => JSON.parse(payload))).toEqual([alone]);

    const burst = Array.from({ length: 40 }, (_, i) => report(i % 2 === 0 ? 'closed' : 'open'));
    for (const each of burst) await box.put(each, { lazy: true });
    fire();
    await box.flush();
    const bundles = publisher.sent.slice(1).map((payload) => positionBundleSchema.parse(JSON.parse(payload)));
    expect(bundles.map((bundle) => bundle.reports.length)).toEqual([32, 8]);
    expect(bundles.flatMap((bundle) => bundle.reports)).toEqual(burst);
    expect(Math.max(...publisher.sent.map((payload) => Buffer.byteLength(payload)))).toBeLessThan(16 * 1024);
  });

  it('sends the reports of a message that failed again after a reconnect, and waits for none while offline', async () => {
    const publisher = new FakePublisher();
    const { timers, fire } = handTimers();
    const box = await started(publisher, { reportLingerMs: 100, timers });
    const reports = [report('open'), report('closed')];
    for (const each of reports) await box.put(each, { lazy: true });
    publisher.onPublish = () => {
      throw new Error('the connection to the broker closed');
    };
    fire();
    await box.flush();
    expect(publisher.sent).toEqual([]);
    expect(box.size).toBe(2);

    publisher.onPublish = () => undefined;
    publisher.connected = true;
    await box.flush();
    fire();
    await box.flush();
    expect(positionBundleSchema.parse(JSON.parse(publisher.sent[0]!)).reports).toEqual(reports);
    expect(box.size).toBe(0);
  });

  it('reads a log written before reports existed, and confirms a report by its id', async () => {
    const a = ack();
    const r = report();
    await writeFile(logFile(), `P ${JSON.stringify(a)}\nP ${JSON.stringify(r)}\nD ${r.id}\n`);
    expect(replay((await logLines()).slice()).entries.map((entry) => entry.key)).toEqual([a.command_id]);
    const publisher = new FakePublisher();
    await started(publisher);
    expect(keysOf(publisher.sent)).toEqual([`ack ${a.command_id}`]);
  });

  it('ignores a record that is neither an acknowledgement nor a valid report', async () => {
    const forged = { ...report(), position: 'ajar' };
    await writeFile(logFile(), `P ${JSON.stringify(forged)}\n`);
    const publisher = new FakePublisher();
    await started(publisher);
    expect(publisher.sent).toEqual([]);
    expect(logs).toContain('outbox: ignored 1 unreadable record(s)');
  });

  it('keeps concurrent puts whole and in the order they were made', async () => {
    const publisher = new FakePublisher();
    publisher.connected = false;
    const box = await started(publisher);
    const acks = Array.from({ length: 30 }, () => ack());
    await Promise.all(acks.map((each) => box.put(each)));
    expect(box.size).toBe(30);
    const after = new FakePublisher();
    await started(after);
    expect(after.sentIds()).toEqual(acks.map((each) => each.command_id));
  });

  it('ignores a torn last record, and the next record starts on a line of its own', async () => {
    const [a, b, c] = [ack(), ack(), ack()];
    const full = JSON.stringify(b);
    await writeFile(logFile(), `P ${JSON.stringify(a)}\nP ${full.slice(0, full.length - 20)}`);
    const offline = new FakePublisher();
    offline.connected = false;
    const first = await started(offline);
    expect(first.size).toBe(1);
    expect(logs).toContain('outbox: ignored a partly written last record');
    await first.put(c);
    await first.stop();

    const publisher = new FakePublisher();
    await started(publisher);
    expect(publisher.sentIds()).toEqual([a.command_id, c.command_id]);
  });

  it('matches a done record with the oldest waiting acknowledgement of that command', () => {
    const opened = JSON.stringify(ack('11111111-1111-4111-8111-111111111111'));
    const duplicate = JSON.stringify(ack('11111111-1111-4111-8111-111111111111', 'refused'));
    const lines = [`P ${opened}`, `P ${duplicate}`, 'D 11111111-1111-4111-8111-111111111111', 'not a record'];
    expect(replay(lines)).toEqual({
      entries: [{ key: '11111111-1111-4111-8111-111111111111', payload: duplicate, report: false }],
      skipped: 1,
    });
  });

  it('sends both acknowledgements of a command, the outcome and then the duplicate refusal', async () => {
    const publisher = new FakePublisher();
    publisher.connected = false;
    const first = await started(publisher);
    const id = randomUUID();
    await first.put(ack(id, 'opened'));
    await first.put(ack(id, 'refused'));
    publisher.connected = true;
    publisher.onPublish = (payload) => {
      if (payload.includes('refused')) throw new Error('connection lost');
    };
    await first.flush();
    expect(publisher.sent).toHaveLength(1);
    await first.stop();

    const after = new FakePublisher();
    await started(after);
    expect(after.sent.map((payload) => (JSON.parse(payload) as Ack).outcome)).toEqual(['refused']);
  });

  it('empties the log once everything is sent and it has grown', async () => {
    const publisher = new FakePublisher();
    const box = await started(publisher, { compaction: { emptyAbove: 2000 } });
    for (let i = 0; i < 20; i++) {
      await box.put(ack());
      await box.flush();
    }
    await box.stop();
    expect((await stat(logFile())).size).toBeLessThan(2000);
    const after = new FakePublisher();
    await started(after);
    expect(after.sent).toEqual([]);
  });

  it('rewrites a large log with the acknowledgements still waiting, in order', async () => {
    const publisher = new FakePublisher();
    publisher.connected = false;
    const box = await started(publisher, { compaction: { rewriteAbove: 1000 } });
    const acks = Array.from({ length: 6 }, () => ack());
    for (const each of acks) await box.put(each);
    publisher.connected = true;
    publisher.onPublish = (payload) => {
      if (payload.includes(acks[3]!.command_id)) throw new Error('connection lost');
    };
    await box.flush();
    await box.stop();
    expect(await logLines()).toEqual(acks.slice(3).map((each) => `P ${JSON.stringify(each)}`));

    const after = new FakePublisher();
    await started(after);
    expect(after.sentIds()).toEqual(acks.slice(3).map((each) => each.command_id));
  });

  it("sends a previous version's one-file-per-acknowledgement outbox first, then removes it", async () => {
    const [a, b, c] = [ack(), ack(), ack()];
    await writeFile(join(dir, `000000000000002-000000-${b.command_id}.json`), JSON.stringify(b));
    await writeFile(join(dir, `000000000000001-000000-${a.command_id}.json`), JSON.stringify(a));
    await writeFile(join(dir, '000000000000003-000000-x.json.1a2b3c.tmp'), '{"v":');
    await writeFile(join(dir, '000000000000004-000000-y.json'), 'not json');
    await writeFile(logFile(), `P ${JSON.stringify(c)}\n`);
    expect(await countWaiting(dir)).toBe(4);

    const offline = new FakePublisher();
    offline.connected = false;
    const first = await started(offline);
    expect(first.size).toBe(3);
    expect(logs.some((line) => line.includes('dropping unreadable 000000000000004-000000-y.json'))).toBe(
      true,
    );
    await first.stop();

    const publisher = new FakePublisher();
    const second = await started(publisher);
    expect(publisher.sentIds()).toEqual([a.command_id, b.command_id, c.command_id]);
    expect(second.size).toBe(0);
    expect(await readdir(dir)).toEqual([OUTBOX_LOG]);
    await second.stop();
    expect(await countWaiting(dir)).toBe(0);
  });
});
