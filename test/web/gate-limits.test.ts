import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserClient, type PageAnswer, visibleText } from '../support/browser-client.js';
import { FakeClock } from '../support/clock.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { insertBarrier, signedInCustomer } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { sensorOn } from '../support/gate-steps.js';

/**
 * A barrier's gates as its customer sees them (docs/design.md section 10.4): each sensed gate's position now
 * and since when, a gate left open past the customer's limit said on the barrier's page and first on the list
 * of barriers, and the form that sets the two limits, which only the barrier's owner can change.
 */
const MIN = 60_000;
const clock = new FakeClock(Date.UTC(2026, 10, 27, 14, 30, 0));
let database: TestDatabase;
let cloud: TestCloud;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database, clock });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

const ago = (ms: number) => new Date(clock.now().getTime() - ms);

async function limitsOf(deviceId: string) {
  return cloud.ctx.db
    .selectFrom('devices')
    .select(['left_open_limit_s', 'move_timeout_s'])
    .where('id', '=', deviceId)
    .executeTakeFirstOrThrow();
}

/** A customer with a barrier whose first three objects have sensors: closed, open 3 min, not reported. */
async function sensedBarrier(name: string) {
  const owner = await signedInCustomer(cloud, `Owner of ${name}`);
  const barrier = await insertBarrier(cloud, owner.id, {
    name,
    online: true,
    labels: ['Main gate', 'Garage door', 'Back gate', 'Side door'],
  });
  const [main, garage, back] = barrier.objects.map((object) => object.number_id);
  await sensorOn(cloud.ctx, main!, { position: 'closed', since: new Date(Date.UTC(2026, 10, 27, 14, 2, 0)) });
  await sensorOn(cloud.ctx, garage!, { position: 'open', since: ago(3 * MIN) });
  await sensorOn(cloud.ctx, back!, null);
  return { ...owner, barrier };
}

function numberField(page: PageAnswer, id: string): string | undefined {
  // Preact leaves out an empty value.
  const input = new RegExp(`<input type="text" id="${id}" name="${id}"[^>]*>`).exec(page.html)?.[0];
  return input === undefined ? undefined : (/ value="([^"]*)"/.exec(input)?.[1] ?? '');
}

describe("a barrier's page", () => {
  it('shows each sensed gate and since when, and the limits saved', async () => {
    const { client, barrier } = await sensedBarrier('Courtyard');
    const page = await client.get(`/barriers/${barrier.deviceId}`);
    expect(page.status).toBe(200);
    const text = visibleText(page.html);
    expect(text).toContain('Gate position Main gate: Closed since 27 Nov 2026, 14:02 UTC');
    expect(text).toContain('Garage door: Open for 3 min (since 27 Nov 2026, 14:27 UTC )');
    expect(text).not.toContain('longer than your limit');
    expect(text).toContain('Back gate: position not reported yet');
    expect(text).not.toContain('Side door:');
    expect(text).toContain('Tell me when the gate stays open longer than');
    expect(numberField(page, 'left_open_minutes')).toBe('10');
    expect(numberField(page, 'move_timeout_seconds')).toBe('30');
    expect(page.html).toContain('aria-labelledby="left_open_minutes-label left_open_minutes-unit"');
  });

  it('says a gate has stayed open longer than the limit', async () => {
    const { client, barrier } = await sensedBarrier('Loading bay');
    await sensorOn(cloud.ctx, barrier.objects[1]!.number_id, { position: 'open', since: ago(12 * MIN) });
    const text = visibleText((await client.get(`/barriers/${barrier.deviceId}`)).html);
    expect(text).toContain(
      'Garage door: Open for 12 min (since 27 Nov 2026, 14:18 UTC ) , longer than your limit of 10 min',
    );
  });

  it('says what a position sensor would give when the controller reports none', async () => {
    const owner = await signedInCustomer(cloud, 'No sensors');
    const barrier = await insertBarrier(cloud, owner.id, { name: 'Plain gate' });
    const text = visibleText((await owner.client.get(`/barriers/${barrier.deviceId}`)).html);
    expect(text).not.toContain('Gate position');
    expect(text).toContain('These need a position sensor on the gate');
    expect(text).toContain('Gate alerts');
  });
});

describe('the gate alerts form', () => {
  it('saves both limits, says so, and shows them', async () => {
    const { client, barrier } = await sensedBarrier('Saved gate');
    await client.get(`/barriers/${barrier.deviceId}`);
    const saved = await client.post(`/barriers/${barrier.deviceId}/gate-limits`, {
      left_open_minutes: ' 25 ',
      move_timeout_seconds: '45',
    });
    expect(saved.status, visibleText(saved.html)).toBe(303);
    expect(saved.location).toBe(`/barriers/${barrier.deviceId}?limits=1`);
    expect(await limitsOf(barrier.deviceId)).toEqual({ left_open_limit_s: 1500, move_timeout_s: 45 });
    const page = await client.get(saved.location!);
    expect(visibleText(page.html)).toContain('Gate alerts saved.');
    expect(numberField(page, 'left_open_minutes')).toBe('25');
    expect(numberField(page, 'move_timeout_seconds')).toBe('45');

    await client.post(`/barriers/${barrier.deviceId}/gate-limits`, {
      left_open_minutes: '1440',
      move_timeout_seconds: '5',
    });
    expect(await limitsOf(barrier.deviceId)).toEqual({ left_open_limit_s: 86_400, move_timeout_s: 5 });
    await client.post(`/barriers/${barrier.deviceId}/gate-limits`, {
      left_open_minutes: '1',
      move_timeout_seconds: '600',
    });
    expect(await limitsOf(barrier.deviceId)).toEqual({ left_open_limit_s: 60, move_timeout_s: 600 });
  });

  it.each([
    ['0', '30', 'left_open_minutes', 'Enter a whole number of minutes from 1 to 1440.'],
    ['1441', '30', 'left_open_minutes', 'Enter a whole number of minutes from 1 to 1440.'],
    ['ten', '30', 'left_open_minutes', 'Enter a whole number of minutes from 1 to 1440.'],
    ['1.5', '30', 'left_open_minutes', 'Enter a whole number of minutes from 1 to 1440.'],
    ['', '30', 'left_open_minutes', 'Enter a whole number of minutes from 1 to 1440.'],
    ['-5', '30', 'left_open_minutes', 'Enter a whole number of minutes from 1 to 1440.'],
    ['10', '4', 'move_timeout_seconds', 'Enter a whole number of seconds from 5 to 600.'],
    ['10', '601', 'move_timeout_seconds', 'Enter a whole number of seconds from 5 to 600.'],
    ['10', '99999999999', 'move_timeout_seconds', 'Enter a whole number of seconds from 5 to 600.'],
  ])(
    '[attack:web.gate-limits-bounds] refuses %j minutes and %j seconds with the problem at the top and beside the field, keeping what was typed',
    async (minutes, seconds, field, message) => {
      const { client, barrier } = await sensedBarrier(`Refusing gate ${minutes} ${seconds}`);
      await client.get(`/barriers/${barrier.deviceId}`);
      const refused = await client.post(`/barriers/${barrier.deviceId}/gate-limits`, {
        left_open_minutes: minutes,
        move_timeout_seconds: seconds,
      });
      expect(refused.status).toBe(400);
      expect(refused.html).toContain('There is a problem');
      expect(refused.html).toContain(`<a href="#${field}">${message}</a>`);
      expect(refused.html).toContain(`<p class="field-error" id="${field}-error">${message}</p>`);
      expect(refused.html).toMatch(
        new RegExp(`id="${field}"[^>]*aria-describedby="${field}-hint ${field}-error"`),
      );
      expect(numberField(refused, 'left_open_minutes')).toBe(minutes);
      expect(numberField(refused, 'move_timeout_seconds')).toBe(seconds);
      expect(await limitsOf(barrier.deviceId)).toEqual({ left_open_limit_s: 600, move_timeout_s: 30 });
    },
  );

  it('names both fields when both are wrong, and a field missing from the post as empty', async () => {
    const { client, barrier } = await sensedBarrier('Both wrong');
    await client.get(`/barriers/${barrier.deviceId}`);
    const refused = await client.post(`/barriers/${barrier.deviceId}/gate-limits`, {
      left_open_minutes: ['5000', '10'],
    });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('<a href="#left_open_minutes">');
    expect(refused.html).toContain('<a href="#move_timeout_seconds">');
    expect(numberField(refused, 'left_open_minutes')).toBe('5000');
  });

  it("[attack:web.other-customer-urls] answers 404 for another customer's barrier and changes nothing", async () => {
    const theirs = await sensedBarrier('Their gate');
    const { client } = await signedInCustomer(cloud, 'Mallory');
    await client.get('/barriers');
    for (const path of [
      `/barriers/${theirs.barrier.deviceId}/gate-limits`,
      '/barriers/DNOSUCHGATE1/gate-limits',
    ]) {
      const answer = await client.post(path, { left_open_minutes: '1440', move_timeout_seconds: '600' });
      expect(answer.status, path).toBe(404);
      expect(answer.html).not.toContain('Their gate');
    }
    expect((await client.post('/barriers/not-a-barrier/gate-limits', {})).status).toBe(404);
    expect(await limitsOf(theirs.barrier.deviceId)).toEqual({ left_open_limit_s: 600, move_timeout_s: 30 });
  });

  it('[attack:web.csrf-cross-site-form] refuses a post without the page token, or from another site, and changes nothing', async () => {
    const { client, barrier } = await sensedBarrier('Token gate');
    await client.get(`/barriers/${barrier.deviceId}`);
    const path = `/barriers/${barrier.deviceId}/gate-limits`;
    const fields = { left_open_minutes: '1', move_timeout_seconds: '5' };
    const noToken = await client.post(path, { ...fields, _csrf: '' });
    expect(noToken.status).toBe(403);
    const forged = await client.post(path, { ...fields, _csrf: 'forged-token' });
    expect(forged.status).toBe(403);
    const crossSite = await client.post(path, fields, { origin: 'https://evil.example' });
    expect(crossSite.status).toBe(403);
    expect(await limitsOf(barrier.deviceId)).toEqual({ left_open_limit_s: 600, move_timeout_s: 30 });
  });

  it('refuses a signed-out post as needing to sign in, and changes nothing', async () => {
    const { barrier } = await sensedBarrier('Signed-out gate');
    const stranger = new BrowserClient(cloud.app);
    await stranger.get('/signin');
    const answer = await stranger.post(`/barriers/${barrier.deviceId}/gate-limits`, {
      left_open_minutes: '1',
      move_timeout_seconds: '5',
    });
    expect(answer.status).toBe(401);
    expect(await limitsOf(barrier.deviceId)).toEqual({ left_open_limit_s: 600, move_timeout_s: 30 });
  });
});

describe('the list of barriers', () => {
  function alerts(page: PageAnswer): string[] {
    return [...page.html.matchAll(/<p class="gate-alert">([\s\S]*?)<\/p>/g)].map((match) =>
      visibleText(match[1]!),
    );
  }

  it('shows a gate left open past its limit on its barrier, and nothing for one open within it', async () => {
    const owner = await signedInCustomer(cloud, 'List owner');
    const late = await insertBarrier(cloud, owner.id, { name: 'Late gate', labels: ['Main gate', 'Door'] });
    const fresh = await insertBarrier(cloud, owner.id, { name: 'Fresh gate', labels: ['Main gate'] });
    const alerted = await insertBarrier(cloud, owner.id, { name: 'Alerted gate', labels: ['Yard gate'] });
    const since = ago(16 * MIN);
    await sensorOn(cloud.ctx, late.objects[0]!.number_id, { position: 'open', since: ago(28 * MIN) });
    await sensorOn(cloud.ctx, late.objects[1]!.number_id, { position: 'closed', since: ago(60 * MIN) });
    await sensorOn(cloud.ctx, fresh.objects[0]!.number_id, { position: 'open', since: ago(2 * MIN) });
    // Raised by the sweep under a shorter limit, since made longer: the alert stands until the gate closes.
    await sensorOn(cloud.ctx, alerted.objects[0]!.number_id, {
      position: 'open',
      since,
      leftOpenAt: ago(MIN),
    });
    await cloud.ctx.db
      .updateTable('devices')
      .set({ left_open_limit_s: 3600 })
      .where('id', '=', alerted.deviceId)
      .execute();

    const page = await owner.client.get('/barriers');
    expect(alerts(page).sort()).toEqual([
      'Main gate left open since 27 Nov 2026, 14:02 UTC',
      'Yard gate left open since 27 Nov 2026, 14:14 UTC',
    ]);
    const text = visibleText(page.html);
    expect(text).toMatch(/Late gate Main gate left open since 27 Nov 2026, 14:02 UTC/);
    expect(text).toMatch(/Alerted gate Yard gate left open since/);
    expect(text).toMatch(/Fresh gate No company has access/);

    clock.advance(9 * MIN);
    expect(alerts(await owner.client.get('/barriers'))).toHaveLength(3);
    clock.advance(-9 * MIN);
  });

  it('counts a gate left open at once when its owner shortens the limit', async () => {
    const { client, barrier } = await sensedBarrier('Shortened gate');
    const listed = async () => alerts(await client.get('/barriers'));
    expect(await listed()).toEqual([]);
    await client.get(`/barriers/${barrier.deviceId}`);
    await client.post(`/barriers/${barrier.deviceId}/gate-limits`, {
      left_open_minutes: '2',
      move_timeout_seconds: '30',
    });
    expect(await listed()).toEqual(['Garage door left open since 27 Nov 2026, 14:27 UTC']);
  });
});
