import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { barrierScope } from '../../cloud/rules/journal/barrier-journal.js';
import { csvCell, csvLine, neutraliseFormula } from '../../cloud/rules/journal/csv.js';
import { journalCsvHeader, journalCsvStream } from '../../cloud/rules/journal/journal-csv.js';
import {
  insertEntries,
  type JournalBarrier,
  journalBarrier,
  type KeyHolder,
  keyHolder,
} from '../support/barrier-journal.js';
import { BrowserClient } from '../support/browser-client.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * A barrier's journal as CSV (docs/design.md section 10.5): RFC 4180 that parses back to what was written,
 * cells a spreadsheet would run as formulas neutralised, the page's filters, and the whole journal streamed in
 * batches that are read only as fast as the client takes them.
 */
let database: TestDatabase;
let cloud: TestCloud;
let customerId: number;
let client: BrowserClient;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
  customerId = (await createCustomer(cloud.ctx, { displayName: 'Carl Csv' })).id;
  client = await BrowserClient.signedIn(cloud, customerId);
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

/**
 * RFC 4180, read strictly: every record ends with CRLF, a quoted field doubles its quotes and may hold commas
 * and line breaks, and a quote anywhere else is an error.
 */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r') {
        if (text[i] === '"' || text[i] === '\n') throw new Error(`bare ${JSON.stringify(text[i])} at ${i}`);
        field += text[i++];
      }
    }
    record.push(field);
    if (text[i] === ',') {
      i++;
    } else if (text.startsWith('\r\n', i)) {
      records.push(record);
      record = [];
      i += 2;
    } else {
      throw new Error(`expected a comma or CRLF at ${i}`);
    }
  }
  if (record.length > 0) throw new Error('the last record does not end with CRLF');
  return records;
}

/** The export's records as objects keyed by the header, after checking its headers, BOM and header row. */
async function exportOf(barrier: JournalBarrier, query = ''): Promise<Record<string, string>[]> {
  const answer = await client.get(`/barriers/${barrier.deviceId}/journal.csv${query}`);
  expect(answer.status, answer.html.slice(0, 500)).toBe(200);
  expect(answer.headers['content-type']).toBe('text/csv; charset=utf-8');
  expect(answer.headers['cache-control']).toBe('no-store');
  const day = new Date().toISOString().slice(0, 10);
  expect(answer.headers['content-disposition']).toBe(
    `attachment; filename="journal-${barrier.deviceId}-${day}.csv"`,
  );
  expect(answer.html.startsWith('\uFEFF')).toBe(true);
  const [header, ...rows] = parseCsv(answer.html.slice(1));
  // The customer has chosen no zone, so the local time is UTC's too, named so in the last column.
  const columns = journalCsvHeader('UTC');
  expect(header).toEqual(columns);
  return rows.map((row) => {
    expect(row).toHaveLength(columns.length);
    return Object.fromEntries(columns.map((name, i) => [name, row[i]!]));
  });
}

describe('the export', () => {
  let barrier: JournalBarrier;
  let plain: KeyHolder;
  let verified: KeyHolder;
  let ids: number[];

  beforeAll(async () => {
    barrier = await journalBarrier(cloud.ctx, customerId, 'Gate, "north"');
    plain = await keyHolder(cloud.ctx, { customerId, barrier, name: 'Smith, Jones & "Partners"' });
    verified = await keyHolder(cloud.ctx, {
      customerId,
      barrier,
      name: 'Bäckerei Müller',
      domain: 'xn--bckerei-mller-bfb28a.example',
    });
    ids = await insertEntries(cloud.ctx, barrier, [
      { holder: plain, actor: 'Anna\nline two', at: new Date(Date.UTC(2025, 4, 1, 6, 0, 0)) },
      {
        holder: verified,
        actor: 'علی‌اکبر',
        outcome: 'device_error',
        detail: 'relay_fault',
        at: new Date(Date.UTC(2025, 4, 1, 7, 30, 5)),
        object: 1,
      },
      { holder: verified, actor: 'Bo', outcome: 'pending', at: new Date(Date.UTC(2025, 4, 1, 8, 0, 0)) },
    ]);
  });

  it('writes a header and one record per entry, newest first, that parse back to what was written', async () => {
    const rows = await exportOf(barrier);
    expect(rows.map((row) => Number(row['Entry id']))).toEqual([...ids].reverse());
    expect(rows[2]).toEqual({
      'Time (UTC)': '2025-05-01 06:00:00',
      Barrier: 'Gate, "north"',
      Object: 'Main gate',
      Company: 'Smith, Jones & "Partners"',
      'Verified domain': '',
      Actor: 'Anna\nline two',
      Outcome: 'Opened',
      'Outcome code': 'opened',
      Detail: '',
      'Acknowledged at (UTC)': '2025-05-01 06:00:00',
      'Key ref': String(plain.keyRef),
      'Entry id': String(ids[0]),
      'Delivered at (UTC)': '',
      'Gate opened at (UTC)': '',
      'Gate closed at (UTC)': '',
      'Gate did not move at (UTC)': '',
      'Left open alert at (UTC)': '',
      'Local time (UTC)': '2025-05-01 06:00:00',
    });
    expect(rows[1]).toMatchObject({
      Object: 'Side door',
      Company: 'Bäckerei Müller',
      'Verified domain': 'bäckerei-müller.example',
      Actor: 'علی‌اکبر',
      Outcome: 'Controller reported a fault: relay_fault',
      'Outcome code': 'device_error',
      Detail: 'relay_fault',
      'Acknowledged at (UTC)': '',
    });
    expect(rows[0]).toMatchObject({ Outcome: 'In progress', 'Outcome code': 'pending' });
  });

  it('applies the filters of the page', async () => {
    const byCompany = await exportOf(barrier, `?company=${verified.companyId}`);
    expect(byCompany.map((row) => Number(row['Entry id']))).toEqual([ids[2], ids[1]]);
    const byOutcome = await exportOf(barrier, '?outcome=device_error&company=');
    expect(byOutcome.map((row) => Number(row['Entry id']))).toEqual([ids[1]]);
    const none = await exportOf(barrier, `?company=${plain.companyId}&outcome=pending`);
    expect(none).toEqual([]);
  });

  it('[attack:web.csv-formula] neutralises cells a spreadsheet would run as a formula', async () => {
    const evil = await journalBarrier(cloud.ctx, customerId, "=cmd|' /C calc'!A0");
    const holder = await keyHolder(cloud.ctx, { customerId, barrier: evil, name: '@SUM(1+1)*cmd' });
    const actors = [
      '=HYPERLINK("http://evil","click")',
      '+1+2',
      "-2+3+cmd|' /C calc'!A0",
      '@SUM(A1:A2)',
      '\t=1+1',
      '\r=1+1',
      '  =1+1',
      '＝1+1',
      'Anna = driver',
    ];
    await insertEntries(
      cloud.ctx,
      evil,
      actors.map((actor) => ({ holder, actor, outcome: 'opened' as const })),
    );
    const rows = await exportOf(evil);
    expect(rows.map((row) => row.Actor).reverse()).toEqual([
      '\'=HYPERLINK("http://evil","click")',
      "'+1+2",
      "'-2+3+cmd|' /C calc'!A0",
      "'@SUM(A1:A2)",
      "'\t=1+1",
      "'\r=1+1",
      "'  =1+1",
      "'＝1+1",
      'Anna = driver',
    ]);
    for (const row of rows) {
      expect(row.Barrier).toBe("'=cmd|' /C calc'!A0");
      expect(row.Company).toBe("'@SUM(1+1)*cmd");
    }
  });

  it('streams a long journal complete and in order, across its batches', async () => {
    const long = await journalBarrier(cloud.ctx, customerId, 'Busy gate');
    const holder = await keyHolder(cloud.ctx, { customerId, barrier: long, name: 'Busy Ltd' });
    const written = await insertEntries(
      cloud.ctx,
      long,
      Array.from({ length: 5000 }, (_, i) => ({ holder, actor: `Driver ${i}` })),
    );
    const rows = await exportOf(long);
    expect(rows.map((row) => Number(row['Entry id']))).toEqual([...written].reverse());
    expect(rows.at(-1)!.Actor).toBe('Driver 0');
    expect(rows[0]!.Actor).toBe('Driver 4999');
  });
});

describe('the export stream', () => {
  it('reads the database only as fast as its reader takes the lines, and stops when the reader goes', async () => {
    const barrier = await journalBarrier(cloud.ctx, customerId, 'Slow reader gate');
    const holder = await keyHolder(cloud.ctx, { customerId, barrier, name: 'Paced Ltd' });
    await insertEntries(
      cloud.ctx,
      barrier,
      Array.from({ length: 5000 }, (_, i) => ({ holder, actor: `Paced driver ${i}` })),
    );
    let queries = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => {
        queries++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const db = cloud.ctx.db.withPlugin(counting);
    // 50 batches of 100 lines; the reader takes the first chunk and stops reading.
    const scope = await barrierScope(db, customerId, barrier.deviceId);
    const stream = journalCsvStream(db, scope, {}, { barrierName: 'Slow reader gate', zone: 'UTC' }, 100);
    const first = await new Promise<Buffer>((resolve) => {
      stream.once('data', (chunk: Buffer) => {
        stream.pause();
        resolve(chunk);
      });
    });
    expect(first.toString('utf8')).toContain('Time (UTC)');
    await expect.poll(() => stream.readableLength >= stream.readableHighWaterMark).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const whilePaused = queries;
    expect(whilePaused).toBeGreaterThan(0);
    expect(whilePaused).toBeLessThan(10);
    stream.destroy();
    await new Promise((resolve) => stream.once('close', resolve));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(queries).toBeLessThanOrEqual(whilePaused + 1);
  });
});

describe('cells', () => {
  it.each([
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@x', "'@x"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
    ['\nx', "'\nx"],
    [' \u3000=x', "' \u3000=x"],
    ['＋1', "'＋1"],
    ['－1', "'－1"],
    ['＠x', "'＠x"],
    ['Anna', 'Anna'],
    ["O'Brien", "O'Brien"],
    ['1-2', '1-2'],
    ['a=b', 'a=b'],
    ['', ''],
  ])('neutralises %j as %j', (text, expected) => {
    expect(neutraliseFormula(text)).toBe(expected);
  });

  it('quotes every text, doubles its quotes, leaves numbers and absent values bare, ends lines with CRLF', () => {
    expect(csvCell('say "hi", then\r\ngo')).toBe('"say ""hi"", then\r\ngo"');
    expect(csvCell('=1')).toBe('"\'=1"');
    expect(csvCell(42)).toBe('42');
    expect(csvCell(null)).toBe('');
    expect(csvLine(['a', 1, null, 'b,c'])).toBe('"a",1,,"b,c"\r\n');
    expect(parseCsv(csvLine(['a', 1, null, 'b,c']))).toEqual([['a', '1', '', 'b,c']]);
  });
});
