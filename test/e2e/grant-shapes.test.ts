import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wallClockOf } from '../../cloud/foundation/zones/wall-clock.js';
import { FakeClock } from '../support/clock.js';
import { type Answer, secretCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { type SecretAuth, signedInCustomer } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type SimulatedBarrier, simulatedBarrier } from '../support/simulated-barrier.js';
import { apiTime, mondayAhead } from '../support/weekly-times.js';

/**
 * Grants the customer shapes (docs/design.md section 3.1), end to end: a company proposes weekday mornings for
 * two weeks with five openings, the customer narrows it to Monday mornings on the consent form and grants; the
 * company reads the shape in `status` and opens through a real controller runtime (simulated outputs) on a
 * Monday morning, and is refused with its own code before the start, on a Tuesday, after noon and once the
 * openings are spent, each refusal in the customer's journal in words. The cloud's clock is a fake one, set
 * ahead of the real time (the controller refuses commands already past their end on its own clock): the
 * Mondays are those after the coming week, in Europe/Berlin.
 */

const ZONE = 'Europe/Berlin';
const HOUR = 3600_000;
const DAY = 24 * HOUR;

let database: TestDatabase;
let cloud: TestCloud;
let clock: FakeClock;
let barrier: SimulatedBarrier;
let company: SecretAuth;
/** 08:00 in Berlin on the first Monday at least eight days ahead: the proposal's start. */
let firstMonday: Date;

/** The instant of `hour`:00 Berlin time, `days` after the first Monday's midnight in Berlin. */
function berlin(days: number, hour: number): Date {
  return new Date(firstMonday.getTime() - 8 * HOUR + days * DAY + hour * HOUR);
}

beforeAll(async () => {
  firstMonday = mondayAhead(ZONE, 8, 8);
  clock = new FakeClock(new Date(firstMonday.getTime() - 3 * DAY));
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock });
  company = await secretCompany(cloud, 'Demo Cleaning Ltd');
  barrier = await simulatedBarrier(cloud, 'Anna Owner');
  const { client } = barrier.customer;
  await client.get(`/barriers/${barrier.deviceId}`);
  const zoned = await client.post(`/barriers/${barrier.deviceId}/time-zone`, { time_zone: ZONE });
  expect(zoned.status).toBe(303);
}, 120_000);

afterAll(async () => {
  await barrier?.stop();
  await cloud?.stop();
  await database?.close();
});

const PROPOSAL = () => ({
  windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '08:00', to: '12:00' }],
  starts_at: apiTime(firstMonday),
  ends_at: apiTime(berlin(14, 0)),
  openings: 5,
});

async function request(shape: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return cloud.call('request', { ...company, ref: 'CLEAN-7', shape }, headers);
}

function open(keyRef: number, extra: Record<string, unknown> = {}): Promise<Answer> {
  return cloud.call('open', {
    ...company,
    key_ref: keyRef,
    number_id: barrier.numbers.gate,
    actor: 'Ola',
    ...extra,
  });
}

/** The consent form posted as the customer fills it: Monday mornings only, from the start asked, 3 openings. */
function mondayMornings(extra: Record<string, string | string[]> = {}): Record<string, string | string[]> {
  const start = wallClockOf(firstMonday, ZONE);
  return {
    object: String(barrier.numbers.gate),
    hours: 'windows',
    w0_days: ['mon'],
    w0_from: '08:00',
    w0_to: '12:00',
    start: 'later',
    start_day: start.day,
    start_time: start.time,
    openings: 'count',
    openings_count: '3',
    lifetime: 'proposed',
    ...extra,
  };
}

describe('a company proposes a shape, the customer narrows it', () => {
  let code: string;
  let keyRef: number;

  it('[attack:api.shape-nonsense] refuses a proposal with a window of zero length or a start after its end, naming the field', async () => {
    const zero = await request({ windows: [{ days: ['mon'], from: '08:00', to: '08:00' }] });
    expect(zero.status).toBe(400);
    expect(zero.body).toMatchObject({ error: 'invalid_field', field: 'shape.windows[0].to' });
    expect(String(zero.body.message)).toContain('zero length');
    const backwards = await request({ starts_at: apiTime(berlin(7, 8)), ends_at: apiTime(berlin(1, 8)) });
    expect(backwards.status).toBe(400);
    expect(backwards.body).toMatchObject({ error: 'invalid_field', field: 'shape.ends_at' });
    const unknown = await request({ opening: 5 });
    expect(unknown.status).toBe(400);
    expect(String(unknown.body.message)).toContain('shape.opening');
    const past = await request({ ends_at: apiTime(new Date(clock.now().getTime() - HOUR)) });
    expect(past.body).toMatchObject({ error: 'invalid_field', field: 'shape.ends_at' });
  });

  it('shows the customer what was asked for, and starts the form from it', async () => {
    const made = await request(PROPOSAL(), { 'idempotency-key': 'clean-7' });
    expect(made.status).toBe(200);
    code = made.body.code as string;
    const { client } = barrier.customer;
    await client.get(`/c/${code}`);
    expect((await client.post(`/c/${code}/claim`)).status).toBe(303);
    const page = await client.get(`/c/${code}`);
    expect(page.html).toContain('Demo Cleaning Ltd asks for access');
    expect(page.html).toContain('Mondays to Fridays, 8:00 to 12:00');
    expect(page.html).toContain('5 openings in all');
    expect(page.html).toContain(`(${ZONE})`);
    // The form starts from the proposal: its window ticked, its start and its end chosen.
    expect(page.html).toMatch(/name="w0_days" value="fri" checked/);
    expect(page.html).toMatch(/name="lifetime" value="proposed" checked/);
  });

  it('[attack:web.shape-widening] asks before giving more than was asked for', async () => {
    const { client } = barrier.customer;
    const wider = await client.post(`/c/${code}/grant`, mondayMornings({ w0_days: ['mon', 'sat'] }));
    expect(wider.status).toBe(400);
    expect(wider.html).toContain('more than they asked for');
    expect(wider.html).toContain('hours outside those asked for');
    const status = await cloud.call('status', { ...company, code });
    expect(status.body.state).toBe('claimed');
  });

  it('grants the narrower shape, which the company reads in status', async () => {
    const { client } = barrier.customer;
    const granted = await client.post(`/c/${code}/grant`, mondayMornings());
    expect(granted.status).toBe(303);
    const confirmation = await client.get(`/c/${code}?granted=1`);
    expect(confirmation.html).toContain('Done. Below is what you gave');
    expect(confirmation.html).not.toContain('Already granted');
    expect(confirmation.html).toContain('Mondays, 8:00 to 12:00');
    expect(confirmation.html).toContain('3 openings in all (0 used)');
    const status = await cloud.call('status', { ...company, code });
    expect(status.body).toMatchObject({
      state: 'issued',
      time_zone: ZONE,
      openings_used: 0,
      shape: {
        windows: [{ days: ['mon'], from: '08:00', to: '12:00' }],
        starts_at: apiTime(firstMonday),
        ends_at: apiTime(berlin(14, 0)),
        openings: 3,
      },
      key_expires_at: apiTime(berlin(14, 0)),
    });
    keyRef = status.body.key_ref as number;
  });

  it('refuses before the start, opens on a Monday morning, refuses on a Tuesday and after noon', async () => {
    clock.set(berlin(-1, 9));
    expect((await open(keyRef)).body).toMatchObject({ error: 'not_started' });
    clock.set(berlin(0, 9));
    const opened = await open(keyRef);
    expect(opened.status).toBe(200);
    clock.set(berlin(1, 9));
    const tuesday = await open(keyRef);
    expect(tuesday.status).toBe(403);
    expect(tuesday.body).toMatchObject({ error: 'outside_hours' });
    clock.set(berlin(0, 12));
    expect((await open(keyRef)).body).toMatchObject({ error: 'outside_hours' });
  });

  it('[attack:api.shape-widening] a company cannot widen the grant: not through request again, nor through fields of open', async () => {
    const everyDay = [{ days: ['sat'], from: '00:00', to: '24:00' }];
    // Within the Idempotency-Key's day, the same key with another body is refused.
    clock.set(new Date(firstMonday.getTime() - 3 * DAY + HOUR));
    const again = await request({ ...PROPOSAL(), windows: everyDay }, { 'idempotency-key': 'clean-7' });
    expect(again.status).toBe(422);
    expect(again.body.error).toBe('idempotency_conflict');
    // A new request is a new code, for the customer to answer again: the key granted is left as it is.
    const another = await request({ ...PROPOSAL(), windows: everyDay });
    expect(another.status).toBe(200);
    expect(another.body.code).not.toBe(code);
    clock.set(berlin(5, 9));
    const saturday = await open(keyRef, { shape: { windows: everyDay } });
    expect(saturday.body).toMatchObject({ error: 'outside_hours' });
    const status = await cloud.call('status', { ...company, code });
    expect((status.body.shape as { windows: unknown }).windows).toEqual([
      { days: ['mon'], from: '08:00', to: '12:00' },
    ]);
  });

  it('counts the openings, and refuses once they are spent', async () => {
    clock.set(berlin(7, 8));
    expect((await open(keyRef)).status).toBe(200);
    clock.set(berlin(7, 11));
    expect((await open(keyRef)).status).toBe(200);
    const spent = await open(keyRef);
    expect(spent.status).toBe(403);
    expect(spent.body).toMatchObject({ error: 'openings_used' });
    const status = await cloud.call('status', { ...company, code });
    expect(status.body.openings_used).toBe(3);
    expect(barrier.driver.pulses.get('gate')).toBe(3);
  });

  it('shows every refusal in the customer journal in words', async () => {
    const { client } = barrier.customer;
    const journal = await client.get(`/barriers/${barrier.deviceId}/journal`);
    expect(journal.html).toContain('Refused: before the start you set');
    expect(journal.html).toContain('Refused: outside the hours you allowed');
    expect(journal.html).toContain('Refused: all the openings you allowed were used');
  });

  it('lets the customer change the shape later on the barrier page, and status follows', async () => {
    const { client } = barrier.customer;
    const page = await client.get(`/barriers/${barrier.deviceId}`);
    expect(page.html).toContain('3 openings in all (3 used)');
    const form = await client.get(`/barriers/${barrier.deviceId}/keys/${keyRef}/shape`);
    expect(form.status).toBe(200);
    expect(form.html).toMatch(/name="w0_days" value="mon" checked/);
    const saved = await client.post(
      `/barriers/${barrier.deviceId}/keys/${keyRef}/shape`,
      mondayMornings({ start: 'now', openings_count: '5', lifetime: 'keep' }),
    );
    expect(saved.status).toBe(303);
    const status = await cloud.call('status', { ...company, code });
    expect(status.body).toMatchObject({ shape: { openings: 5 }, openings_used: 3 });
    clock.set(berlin(14 - 7, 10));
    expect((await open(keyRef)).status).toBe(200);
  });

  it("[attack:web.shape-foreign-key] another customer cannot see or change the key's shape, nor anyone a withdrawn key's", async () => {
    const stranger = await signedInCustomer(cloud, 'Mallory');
    const path = `/barriers/${barrier.deviceId}/keys/${keyRef}/shape`;
    expect((await stranger.client.get(path)).status).toBe(404);
    await stranger.client.get('/barriers');
    const posted = await stranger.client.post(
      path,
      mondayMornings({ start: 'now', openings: 'any', lifetime: 'withdrawn' }),
    );
    expect(posted.status).toBe(404);
    const { client } = barrier.customer;
    await client.get(`/barriers/${barrier.deviceId}`);
    const withdrawn = await client.post(`/barriers/${barrier.deviceId}/keys/${keyRef}/withdraw`);
    expect(withdrawn.status).toBe(303);
    expect((await client.get(path)).status).toBe(404);
    const status = await cloud.call('status', { ...company, code });
    expect(status.body).toMatchObject({ state: 'revoked', shape: { openings: 5 } });
  });
});
