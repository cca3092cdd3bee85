import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import fc from 'fast-check';
import {
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DB } from '../../cloud/foundation/db/schema.js';
import { CommandWaiters } from '../../cloud/links/controllers/command-waiters.js';
import type { ControllerLink } from '../../cloud/links/controllers/controller-link.js';
import { DeviceMessages } from '../../cloud/links/controllers/device-messages.js';
import {
  BROKER_KINDS,
  BrokerEnv,
  type BrokerKind,
  brokerKindSkipReason,
  dispatch,
  dispatchRequest,
  insertOpenEntry,
  journalState,
} from '../support/broker-env.js';
import { type FakeDevice, insertDevice } from '../support/fake-device.js';
import type { LogEntry } from '../support/recording-logger.js';
import { waitFor } from '../support/wait-for.js';
import { anyMessage, type BuiltMessage, build, type Cast, ownMessage } from './device-message-cases.js';
import {
  comparable,
  invalidValues,
  MAX_PAYLOAD_BYTES,
  type Snapshot,
  snapshot,
  type Verdict,
  verdict,
  withAck,
  withState,
  withTelemetry,
} from './device-message-model.js';
import { fuzzParameters, fuzzTimeoutMs } from './settings.js';

/*
 * What a device publishes on its own channels (shared/README.md, "Messages"), arbitrary and near-valid, first
 * handed straight to the cloud's dispatcher (cloud/links/controllers/device-messages.ts), then sent by a real
 * authenticated device through each broker. Whatever arrives: the process never fails, the broker keeps
 * serving, the journal and the device's rows change only through valid messages (acks signed by the device
 * itself), and each malformed message is dropped with one log line.
 */

/** Uncaught exceptions and unhandled rejections anywhere in the process while the properties run. */
const faults: unknown[] = [];
const onFault = (error: unknown) => faults.push(error);

/** The dispatcher's properties and the embedded broker's share a database: a PGlite takes seconds to start. */
let embedded: Promise<BrokerEnv> | null = null;
/**
 * What became of a message a real device published: the cloud's verdict; null when the embedded broker refused
 * the publish; UNSEEN when Mosquitto discarded it, over the shipped configuration's `message_size_limit`,
 * so that the cloud never saw it (deploy/mosquitto/README.md, "Limits").
 */
type Outcome = Verdict | null | typeof UNSEEN;
const UNSEEN = { kind: 'unseen' } as const;
const MOSQUITTO_MESSAGE_LIMIT = Number(
  /^message_size_limit (\d+)$/m.exec(
    readFileSync(resolve(import.meta.dirname, '../../deploy/mosquitto/mosquitto.conf'), 'utf8'),
  )?.[1],
);

function openEnv(kind: BrokerKind): Promise<BrokerEnv> {
  if (kind !== 'embedded') return BrokerEnv.open(kind);
  embedded ??= BrokerEnv.open(kind);
  return embedded;
}

beforeAll(() => {
  process.on('uncaughtException', onFault);
  process.on('unhandledRejection', onFault);
});
afterAll(async () => {
  await (await embedded)?.close();
  process.off('uncaughtException', onFault);
  process.off('unhandledRejection', onFault);
});

/** The rows the verdict allows to change, and whether an ack completes its entry. */
function expected(before: Snapshot, v: Verdict): { after: Snapshot; applied: boolean } {
  switch (v.kind) {
    case 'drop':
      return { after: before, applied: false };
    case 'ack':
      return withAck(before, v.ack, v.from);
    case 'state':
      return { after: withState(before, v.state, v.from), applied: false };
    case 'telemetry':
      return { after: withTelemetry(before, v.telemetry, v.from), applied: false };
  }
}

/** One log line per message: a warning that it was dropped, or what the handler says of a valid one. */
function checkLog(lines: LogEntry[], v: Verdict, applied: boolean): void {
  const said = lines.map(({ level, msg, fields }) => ({ level, msg, applied: fields.applied }));
  if (v.kind === 'drop') {
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ level: 'warn', msg: expect.stringMatching(/^dropped /) });
  } else if (v.kind === 'ack') {
    expect(said).toEqual([{ level: 'info', msg: 'acknowledgement', applied }]);
  } else if (v.kind === 'state') {
    expect(said).toEqual([{ level: 'debug', msg: 'device state', applied: undefined }]);
  } else {
    expect(said).toEqual([]);
  }
}

/** A database that is down: every query rejects with this. */
class DatabaseDown extends Error {
  override name = 'DatabaseDown';
}

function databaseDown(): Kysely<DB> {
  const fail = async (): Promise<never> => {
    throw new DatabaseDown('the database is down');
  };
  const driver: Driver = {
    init: async () => {},
    acquireConnection: fail as () => Promise<DatabaseConnection>,
    beginTransaction: fail,
    commitTransaction: fail,
    rollbackTransaction: fail,
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  return new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
}

describe('[attack:fuzz.device-messages] what devices publish, on every channel', () => {
  describe('handed straight to the dispatcher', () => {
    let env: BrokerEnv;
    let cast: Cast;
    let messages: DeviceMessages;

    beforeAll(async () => {
      env = await openEnv('embedded');
      const [self, victim] = [await insertDevice(env.db), await insertDevice(env.db)];
      cast = { db: env.db, self, victim, applied: [] };
      messages = new DeviceMessages(env.context(), new CommandWaiters());
    });
    it(
      'drops each malformed message with one log line, and changes rows only for valid ones',
      async () => {
        const ids = [cast.self.id, cast.victim.id];
        await fc.assert(
          fc.asyncProperty(anyMessage, async (message) => {
            const built = await build(cast, message);
            const before = await snapshot(env.db, ids);
            const mark = env.log.entries.length;
            const v = verdict(cast, built);
            await messages.receive({ topic: built.topic, payload: built.payload, retain: built.retain });
            await messages.idle();
            const after = await snapshot(env.db, ids);
            const model = expected(before, v);
            expect(invalidValues(after)).toEqual([]);
            expect(comparable(after)).toEqual(comparable(model.after));
            checkLog(env.log.entries.slice(mark), v, model.applied);
            expect(faults).toEqual([]);
            if (v.kind === 'ack' && model.applied && v.from === cast.self.id) cast.applied.push(v.ack);
          }),
          fuzzParameters(300),
        );
      },
      fuzzTimeoutMs,
    );

    it(
      'settles every message when the database is down: dropped unread, or rejected with its failure',
      async () => {
        const broken = new DeviceMessages({ ...env.context(), db: databaseDown() }, new CommandWaiters());
        await fc.assert(
          fc.asyncProperty(anyMessage, async (message) => {
            const built = await build(cast, message);
            const v = verdict(cast, built);
            const received = { topic: built.topic, payload: built.payload, retain: built.retain };
            const settled = await broken.receive(received).then(
              () => 'resolved' as const,
              (error: unknown) => error,
            );
            // Everything but a signature check is decided before the database is asked.
            const unread = v.kind === 'drop' && v.stage !== 'signature';
            if (unread) expect(settled).toBe('resolved');
            else expect(settled).toBeInstanceOf(DatabaseDown);
            expect(faults).toEqual([]);
          }),
          fuzzParameters(150),
        );
        await broken.idle();
      },
      fuzzTimeoutMs,
    );
  });

  describe.each(BROKER_KINDS)('published by a real device through the %s broker', (kind) => {
    const skip = brokerKindSkipReason(kind);
    if (skip) {
      it.skip(skip, () => {});
      return;
    }
    let env: BrokerEnv;
    let broker: ControllerLink;
    let cast: Cast;
    let device: FakeDevice;

    beforeAll(async () => {
      env = await openEnv(kind);
      // Long enough never to pass while a device that is there answers; no test waits for it.
      broker = await env.start({ ackTimeoutMs: 30_000 });
      const [self, victim] = [await env.provision(broker), await env.provision(broker)];
      cast = { db: env.db, self, victim, applied: [] };
      device = await env.connect(broker, self);
      await env.waitOnline(self.id);
      await env.roundTrip(device);
    });
    afterAll(async () => {
      if (kind !== 'embedded') await env?.close();
    });

    it(
      'keeps serving: after each batch a real command is acknowledged, and only valid messages counted',
      async () => {
        await fc.assert(
          fc.asyncProperty(fc.array(ownMessage, { minLength: 1, maxLength: 5 }), async (batch) => {
            const built: BuiltMessage[] = [];
            for (const message of batch) built.push(capped(await build(cast, message)));
            const before = await snapshot(env.db, [cast.self.id, cast.victim.id]);
            const mark = env.log.entries.length;
            const verdicts: Outcome[] = [];
            for (const message of built) verdicts.push(await publish(kind, message));
            await env.roundTrip(device);
            const after = await snapshot(env.db, [cast.self.id, cast.victim.id]);
            expect(invalidValues(after)).toEqual([]);
            checkJournal(before, after, verdicts);
            checkDrops(env.log.entries.slice(mark), verdicts);
            expect(faults).toEqual([]);
            await realOpening();
          }),
          fuzzParameters(25),
        );
      },
      fuzzTimeoutMs,
    );

    /**
     * Sends one message as the device. The embedded broker refuses a retained message on a channel that is
     * never retained and closes the connection (cloud/links/controllers/device-access.ts): the device connects again.
     * Otherwise the cloud gets it live, without the retain flag, on either broker.
     */
    async function publish(brokerKind: BrokerKind, message: BuiltMessage): Promise<Outcome> {
      if (brokerKind === 'external' && message.payload.length > MOSQUITTO_MESSAGE_LIMIT) {
        await publishWhileConnected(device, message);
        return UNSEEN;
      }
      const refused = brokerKind === 'embedded' && message.retain && !message.topic.endsWith('/state');
      if (refused) {
        await refusedPublish(device, message);
        device = await env.connect(broker, cast.self);
        return null;
      }
      await publishWhileConnected(device, message);
      return verdict(cast, { ...message, retain: false });
    }

    /** A real opening, as broker-behaviour.test.ts makes one: signed command out, signed ack back, journal. */
    async function realOpening(): Promise<void> {
      // The external broker's dispatch goes by the device's last reported state, which a batch may have set.
      await device.publishState(true);
      await env.waitOnline(cast.self.id);
      const entry = await insertOpenEntry(env.db, cast.self.id);
      const result = dispatch(broker, dispatchRequest(cast.self.id, entry));
      const ack = await device.ack(await device.nextCommand());
      expect(await result).toEqual({ kind: 'acked', ack });
      await waitFor(
        async () => (await journalState(env.db, entry.journalId)).acked_at !== null,
        'the acknowledgement in the journal',
      );
      expect(await journalState(env.db, entry.journalId)).toMatchObject({ outcome: 'opened', events: 1 });
      cast.applied.push(ack);
    }

    /** Journal entries and events changed exactly as the batch's valid acks say, one after another. */
    function checkJournal(before: Snapshot, after: Snapshot, verdicts: Outcome[]): void {
      let model = before;
      for (const v of verdicts) if (v?.kind === 'ack') model = withAck(model, v.ack, v.from).after;
      expect({ journal: after.journal, events: after.events }).toEqual({
        journal: model.journal,
        events: model.events,
      });
    }

    /**
     * As many "dropped" warnings about the device as the batch had malformed messages, one line for each
     * valid ack, and one for each publish the broker refused.
     */
    function checkDrops(lines: LogEntry[], verdicts: Outcome[]): void {
      const mine = lines.filter((line) => line.fields.deviceId === cast.self.id);
      const dropped = mine.filter((line) => line.msg.startsWith('dropped '));
      expect(dropped).toHaveLength(verdicts.filter((v) => v?.kind === 'drop').length);
      expect(dropped.every((line) => line.level === 'warn')).toBe(true);
      const acks = mine.filter((line) => line.msg === 'acknowledgement');
      expect(acks).toHaveLength(verdicts.filter((v) => v?.kind === 'ack').length);
      const refused = mine.filter((line) => line.msg === 'refused a device publish');
      expect(refused).toHaveLength(verdicts.filter((v) => v === null).length);
    }
  });
});

/**
 * Kept within the broker's limits: one byte past the cloud's own, so that the cloud's check is tried, but
 * short of anything a broker may refuse on its own (cloud/links/controllers/embedded-broker.ts).
 */
function capped(message: BuiltMessage): BuiltMessage {
  return { ...message, payload: message.payload.subarray(0, MAX_PAYLOAD_BYTES + 1) };
}

/** Publishes at QoS 1; fails at once, rather than waiting forever for its PUBACK, if the broker hangs up. */
function publishWhileConnected(device: FakeDevice, message: BuiltMessage): Promise<void> {
  const { client } = device;
  return new Promise((resolve, reject) => {
    const onClose = () =>
      reject(new Error(`the broker closed the connection after a publish on ${message.topic}`));
    client.once('close', onClose);
    client.publish(message.topic, message.payload, { qos: 1, retain: message.retain }, (error) => {
      client.off('close', onClose);
      if (error) reject(error);
      else resolve();
    });
  });
}

/** Publishes what the broker must refuse: resolves once it closed the connection, fails if it acknowledged. */
function refusedPublish(device: FakeDevice, message: BuiltMessage): Promise<void> {
  const closed = device.closed();
  const accepted = new Promise<never>((_resolve, reject) =>
    device.client.publish(message.topic, message.payload, { qos: 1, retain: message.retain }, (error) => {
      if (!error) reject(new Error(`the broker accepted a retained message on ${message.topic}`));
    }),
  );
  return Promise.race([closed, accepted]);
}
