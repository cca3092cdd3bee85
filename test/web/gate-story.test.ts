import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonb } from '../../cloud/foundation/db/database.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { durationWords } from '../../cloud/rules/journal/gate-story.js';
import { JOURNAL_CSV_HEADER, journalCsvHeader } from '../../cloud/rules/journal/journal-csv.js';
import {
  insertEntries,
  type JournalBarrier,
  journalBarrier,
  type KeyHolder,
  keyHolder,
} from '../support/barrier-journal.js';
import { BrowserClient, type PageAnswer, visibleText } from '../support/browser-client.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { gateStories, sensorOn, writeSteps } from '../support/gate-steps.js';

/**
 * The whole opening on a journal line (docs/design.md section 10.5): what the gate's sensor saw after the relay
 * ("gate open after 1.8 s · closed after 42 s", "relay fired, gate did not move", a gate left open), every step
 * with its time behind a disclosure, the same steps as the CSV's last columns, and entries without a sensor
 * as they always read.
 */
let database: TestDatabase;
let cloud: TestCloud;
let customerId: number;
let client: BrowserClient;
let barrier: JournalBarrier;
let holder: KeyHolder;
let ids: Awaited<ReturnType<typeof gateStories>>;
let plain: number;
const START = new Date(Date.UTC(2026, 10, 27, 14, 2, 0));

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  customerId = (await createCustomer(cloud.ctx, { displayName: 'Gina Gate' })).id;
  client = await BrowserClient.signedIn(cloud, customerId);
  barrier = await journalBarrier(cloud.ctx, customerId, 'Yard gate');
  holder = await keyHolder(cloud.ctx, {
    customerId,
    barrier,
    name: 'Demo Cleaning Ltd',
    domain: 'demo-cleaning.example',
  });
  await sensorOn(cloud.ctx, barrier.objects[0]!.id, { position: 'open', since: START });
  ids = await gateStories(cloud.ctx, barrier, holder, START);
  // The side door has no sensor: its opening reads as it always did.
  const noSensor = {
    holder,
    actor: 'Eve, no sensor',
    object: 1,
    at: new Date(START.getTime() + 4 * 3600_000),
  };
  plain = (await insertEntries(cloud.ctx, barrier, [noSensor]))[0]!;
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

async function journal(): Promise<PageAnswer> {
  const page = await client.get(`/barriers/${barrier.deviceId}/journal`);
  expect(page.status, visibleText(page.html)).toBe(200);
  return page;
}

/** The html of one entry's line. */
function line(page: PageAnswer, id: number): string {
  const start = page.html.indexOf(`<li class="entry" id="entry-${id}"`);
  expect(start).toBeGreaterThanOrEqual(0);
  const next = page.html.indexOf('<li class="entry"', start + 1);
  return page.html.slice(start, next > 0 ? next : page.html.indexOf('</ul>', start));
}

describe('a journal line', () => {
  it('tells what the gate did after the relay fired, in short words', async () => {
    const page = await journal();
    const text = visibleText(page.html);
    expect(text).toContain(
      'Anna, shift 2 of Demo Cleaning Ltd (demo-cleaning.example) Opened Main gate Gate open after 1.8 s · closed after 42 s',
    );
    expect(text).toContain(
      'Ben, van 7 of Demo Cleaning Ltd (demo-cleaning.example) Opened Main gate Relay fired, gate did not move',
    );
    expect(text).toContain(
      'Cleo, night round of Demo Cleaning Ltd (demo-cleaning.example) Opened Main gate Gate open after 2.2 s · left open, alert at 27 Nov 2026, 16:12 UTC · still open',
    );
    expect(text).toContain(
      'Dan, early shift of Demo Cleaning Ltd (demo-cleaning.example) Opened Main gate Gate open after 5 s · still open',
    );
    expect(line(page, ids.notMoved)).toContain(
      '<span class="story-part bad">Relay fired, gate did not move</span>',
    );
    expect(line(page, ids.leftOpen)).toContain('<span class="story-part warn">');
  });

  it('lists every step with its time to the second behind a disclosure that needs no script', async () => {
    const page = await journal();
    const steps = (id: number) => {
      const html = line(page, id);
      expect(html).toContain('<details class="gate-steps"><summary>Steps of this opening</summary>');
      return visibleText(html.slice(html.indexOf('<details')));
    };
    expect(steps(ids.closed)).toBe(
      [
        'Steps of this opening',
        'Accepted by the cloud 27 Nov 2026, 14:02:00 UTC',
        'Command delivered to the controller 27 Nov 2026, 14:02:00 UTC',
        'Relay fired 27 Nov 2026, 14:02:00 UTC',
        'Gate seen open 27 Nov 2026, 14:02:02 UTC',
        'Gate seen closed 27 Nov 2026, 14:02:44 UTC',
      ].join(' '),
    );
    expect(steps(ids.notMoved)).toBe(
      [
        'Steps of this opening',
        'Accepted by the cloud 27 Nov 2026, 15:02:00 UTC',
        'Command delivered to the controller 27 Nov 2026, 15:02:00 UTC',
        'Relay fired 27 Nov 2026, 15:02:01 UTC',
        'Gate not seen moving: marked “did not move” 27 Nov 2026, 15:02:31 UTC',
      ].join(' '),
    );
    expect(steps(ids.leftOpen)).toContain(
      'Gate seen open 27 Nov 2026, 16:02:03 UTC Gate left open: alert 27 Nov 2026, 16:12:23 UTC',
    );
    expect(line(page, ids.closed)).toContain('<time datetime="2026-11-27T14:02:44.700Z">');
  });

  it('reads as before for an opening without a sensor', async () => {
    const page = await journal();
    const html = line(page, plain);
    expect(html).not.toContain('<details');
    expect(html).not.toContain('class="story"');
    expect(visibleText(html)).toBe(
      'D Eve, no sensor of Demo Cleaning Ltd (demo-cleaning.example) Opened Side door 27 Nov 2026, 18:02 UTC',
    );
  });

  it('says when an opening shared the relay pulse of the one before', async () => {
    const at = new Date(START.getTime() + 5 * 3600_000);
    const [started, joined] = await insertEntries(cloud.ctx, barrier, [
      { holder, actor: 'Fay, first', object: 1, at },
      { holder, actor: 'Gus, second', object: 1, at: new Date(at.getTime() + 300) },
    ]);
    // The controller's acknowledgement of the second names the command whose pulse it joined.
    await cloud.ctx.db
      .updateTable('journal')
      .set({ ack: jsonb({ outcome: 'opened', pulse: crypto.randomUUID() }) })
      .where('id', '=', joined!)
      .execute();
    const page = await journal();
    expect(visibleText(line(page, joined!))).toContain(
      'One pulse with the opening before: the relay was already opening the gate.',
    );
    expect(line(page, started!)).not.toContain('One pulse');
  });

  it('says a gate opened as the relay fired, and a gate left open that closed later', async () => {
    const [early] = await insertEntries(cloud.ctx, barrier, [{ holder, actor: 'Fay, quick gate' }]);
    const fired = new Date(START.getTime() + 5 * 3600_000);
    await writeSteps(cloud.ctx, early!, {
      delivered: fired,
      relayFired: fired,
      opened: new Date(fired.getTime() - 300),
      leftOpen: new Date(fired.getTime() + 600_000),
      closed: new Date(fired.getTime() + (2 * 60 + 4) * 60_000),
    });
    const text = visibleText(line(await journal(), early!));
    expect(text).toContain(
      'Gate open as the relay fired · left open, alert at 27 Nov 2026, 19:12 UTC · closed after 2 h 4 min',
    );
  });
});

describe('durations in words', () => {
  it.each([
    [0, '0 s'],
    [-250, '0 s'],
    [400, '0.4 s'],
    [1800, '1.8 s'],
    [2000, '2 s'],
    [9960, '10 s'],
    [42_000, '42 s'],
    [59_600, '1 min'],
    [185_000, '3 min 5 s'],
    [600_000, '10 min'],
    [(2 * 60 + 4) * 60_000, '2 h 4 min'],
    [3_599_700, '1 h'],
    [27 * 3600_000, '1 day 3 h'],
    [48 * 3600_000, '2 days'],
  ])('says %i ms as %j', (ms, words) => {
    expect(durationWords(ms)).toBe(words);
  });
});

describe('the export', () => {
  it('adds the steps as the last columns, the earlier ones where they were', async () => {
    expect(JOURNAL_CSV_HEADER.slice(0, 12)).toEqual([
      'Time (UTC)',
      'Barrier',
      'Object',
      'Company',
      'Verified domain',
      'Actor',
      'Outcome',
      'Outcome code',
      'Detail',
      'Acknowledged at (UTC)',
      'Key ref',
      'Entry id',
    ]);
    const answer = await client.get(`/barriers/${barrier.deviceId}/journal.csv`);
    expect(answer.status).toBe(200);
    const lines = answer.html.slice(1).split('\r\n');
    expect(lines[0]).toBe(
      journalCsvHeader('UTC')
        .map((name) => `"${name}"`)
        .join(','),
    );
    expect(JOURNAL_CSV_HEADER.slice(12)).toEqual([
      'Delivered at (UTC)',
      'Gate opened at (UTC)',
      'Gate closed at (UTC)',
      'Gate did not move at (UTC)',
      'Left open alert at (UTC)',
    ]);
    const byId = new Map(
      lines
        .slice(1)
        .filter(Boolean)
        .map((text) => {
          // From the end, before the local time: the actors hold commas, the ids and times do not.
          const cells = text.split(',').slice(-9, -1);
          return [Number(cells[2]), cells] as const;
        }),
    );
    const steps = (id: number) => byId.get(id)!.filter((_, i) => i !== 1 && i !== 2);
    expect(steps(ids.closed)).toEqual([
      '"2026-11-27 14:02:00"',
      '"2026-11-27 14:02:00"',
      '"2026-11-27 14:02:02"',
      '"2026-11-27 14:02:44"',
      '',
      '',
    ]);
    expect(steps(ids.notMoved)).toEqual([
      '"2026-11-27 15:02:01"',
      '"2026-11-27 15:02:00"',
      '',
      '',
      '"2026-11-27 15:02:31"',
      '',
    ]);
    expect(steps(ids.leftOpen)).toEqual([
      '"2026-11-27 16:02:00"',
      '"2026-11-27 16:02:00"',
      '"2026-11-27 16:02:03"',
      '',
      '',
      '"2026-11-27 16:12:23"',
    ]);
    expect(steps(plain).slice(1)).toEqual(['', '', '', '', '']);
  });
});
