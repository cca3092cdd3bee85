import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../cloud/foundation/clock.js';
import type { ControllerLink } from '../../cloud/links/controllers/controller-link.js';
import { indexedMemoryPersistence, topicMatches } from '../../cloud/links/controllers/retained-messages.js';
import { DeviceStates } from '../../cloud/rules/devices/device-states.js';
import { type DeviceState, PROTOCOL_VERSION } from '../../shared/protocol/messages.js';
import { BrokerEnv, PREFIX } from '../support/broker-env.js';
import { type DeviceAccount, FakeDevice, insertDevice, tryConnect } from '../support/fake-device.js';

/**
 * A fleet connecting at once (docs/design.md section 7.3): logins read many at a time, states written many
 * devices at a time, retained messages found by topic. Each still decides per device, as when devices came
 * one by one.
 */

let env: BrokerEnv;
let broker: ControllerLink;

beforeAll(async () => {
  env = await BrokerEnv.open('embedded');
  broker = await env.start();
});

afterAll(async () => {
  await env?.close();
});

const objectsOf = (deviceId: string) =>
  env.db
    .selectFrom('device_objects')
    .select(['id', 'local_id', 'label', 'removed_at'])
    .where('device_id', '=', deviceId)
    .orderBy('local_id')
    .execute();

describe('logins arriving together', () => {
  it('[attack:mqtt.session-takeover] twenty-four devices log in at once; the six with wrong credentials are refused, only they', async () => {
    const accounts = await Promise.all(Array.from({ length: 24 }, () => env.provision(broker)));
    const stranger = await insertDevice(env.db);
    const attempts = accounts.map((account, i) => {
      if (i % 4 !== 0) return { account, password: account.password, genuine: true };
      // Another device's password, a guess, and a password of a device this one is not.
      const wrong = [accounts[(i + 1) % accounts.length]!.password, 'guessed', stranger.password][i % 3]!;
      return { account, password: wrong, genuine: false };
    });
    const results = await Promise.all(
      attempts.map(({ account, password }) =>
        tryConnect(broker.deviceUrl, { clientId: account.id, username: account.id, password }),
      ),
    );
    expect(results.map((result) => result.ok)).toEqual(attempts.map((attempt) => attempt.genuine));
  });
});

describe('states reported together', () => {
  it('brings a dozen devices online at once, each with the version it reported', async () => {
    const accounts: DeviceAccount[] = await Promise.all(
      Array.from({ length: 12 }, () => env.provision(broker)),
    );
    await Promise.all(accounts.map((account) => env.connect(broker, account)));
    for (const account of accounts) await env.waitOnline(account.id);
    const rows = await env.db
      .selectFrom('devices')
      .select(['online', 'version'])
      .where(
        'id',
        'in',
        accounts.map((account) => account.id),
      )
      .execute();
    expect(rows).toEqual(accounts.map(() => ({ online: true, version: '1.0.0' })));
  });

  it('keeps numbers across reports, marks an object missing from a report removed, and gives it back its number', async () => {
    const states = new DeviceStates(env.db, systemClock);
    const [first, second] = await Promise.all([insertDevice(env.db), insertDevice(env.db)]);
    const report = (id: string, objects: string[]): DeviceState => ({
      v: PROTOCOL_VERSION,
      device_id: id,
      online: true,
      at: Date.now(),
      version: '1.2.3',
      objects: objects.map((local) => ({ id: local, label: `Gate ${local}`, kind: 'relay' })),
    });
    expect(
      await Promise.all([
        states.record(first!.id, report(first!.id, ['a', 'b'])),
        states.record(second!.id, report(second!.id, ['a'])),
        states.record('d_unknown000000000000000000', report('d_unknown000000000000000000', ['a'])),
      ]),
    ).toEqual([true, true, false]);
    const numbers = (await objectsOf(first!.id)).map((object) => object.id);

    await Promise.all([
      states.record(first!.id, report(first!.id, ['a'])),
      // The same device twice in one batch: written in order, the later report last.
      states.record(second!.id, report(second!.id, ['b'])),
      states.record(second!.id, { ...report(second!.id, []), objects: undefined, online: false }),
    ]);
    const afterRemoval = await objectsOf(first!.id);
    expect(afterRemoval.map((object) => [object.local_id, object.removed_at === null])).toEqual([
      ['a', true],
      ['b', false],
    ]);
    const secondRow = await env.db
      .selectFrom('devices')
      .select(['online', 'version'])
      .where('id', '=', second!.id)
      .executeTakeFirstOrThrow();
    expect(secondRow).toEqual({ online: false, version: '1.2.3' });
    expect(
      (await objectsOf(second!.id)).map((object) => [object.local_id, object.removed_at === null]),
    ).toEqual([
      ['a', false],
      ['b', true],
    ]);

    await states.record(first!.id, report(first!.id, ['a', 'b']));
    expect((await objectsOf(first!.id)).map((object) => object.id)).toEqual(numbers);
  });

  it('a device whose retained state is kept still connects and is online again after a reconnect', async () => {
    const account = await env.provision(broker);
    const device = await FakeDevice.connect(broker.deviceUrl, account, {
      prefix: PREFIX,
      cloudKey: env.serviceKey.publicKey,
    });
    await env.waitOnline(account.id);
    await device.close();
    const again = await env.connect(broker, account);
    await env.waitOnline(again.id);
  });
});

describe('retained messages by topic', () => {
  it('finds a retained message by its exact topic, by filters with wildcards, and forgets it when emptied', async () => {
    const persistence = indexedMemoryPersistence();
    const packet = (topic: string, payload: string) => ({
      cmd: 'publish' as const,
      topic,
      payload: Buffer.from(payload),
      qos: 1 as const,
      retain: true,
      dup: false,
      brokerId: 'b',
      brokerCounter: 1,
    });
    const store = (topic: string, payload: string) =>
      (persistence.storeRetained as unknown as (p: ReturnType<typeof packet>) => Promise<void>)(
        packet(topic, payload),
      );
    const read = async (filters: string[]) => {
      const topics: string[] = [];
      for await (const found of persistence.createRetainedStreamCombi(filters))
        topics.push((found as { topic: string }).topic);
      return topics.sort();
    };
    await store('g/d/1/state', 'on');
    await store('g/d/2/state', 'on');
    await store('$SYS/x', 'y');
    expect(await read(['g/d/1/state'])).toEqual(['g/d/1/state']);
    expect(await read(['g/d/1/cmd'])).toEqual([]);
    expect(await read(['g/d/+/state'])).toEqual(['g/d/1/state', 'g/d/2/state']);
    expect(await read(['#'])).toEqual(['g/d/1/state', 'g/d/2/state']);
    await store('g/d/1/state', '');
    expect(await read(['g/#'])).toEqual(['g/d/2/state']);
  });

  it('matches topic filters as MQTT 3.1.1 section 4.7 says', () => {
    const cases: [string, string, boolean][] = [
      ['a/b', 'a/b', true],
      ['a/+', 'a/b', true],
      ['a/+', 'a/b/c', false],
      ['a/#', 'a', true],
      ['a/#', 'a/b/c', true],
      ['+/+', 'a/b', true],
      ['+', '$SYS', false],
      ['#', '$SYS/x', false],
      ['$SYS/#', '$SYS/x', true],
      ['a/b', 'a/b/c', false],
      ['a/+/c', 'a//c', true],
    ];
    for (const [filter, topic, expected] of cases) {
      expect({ filter, topic, matches: topicMatches(filter, topic) }).toEqual({
        filter,
        topic,
        matches: expected,
      });
    }
  });
});
