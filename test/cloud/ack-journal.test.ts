import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckJournal } from '../../cloud/rules/journal/ack-journal.js';
import { completeEntry } from '../../cloud/rules/journal/journal.js';
import { type Ack, PROTOCOL_VERSION } from '../../shared/protocol/messages.js';
import { signAck } from '../../shared/protocol/signing.js';
import { BrokerEnv, insertOpenEntry, type OpenEntry } from '../support/broker-env.js';
import { type DeviceAccount, insertDevice } from '../support/fake-device.js';

/**
 * Acknowledgements of many controllers in one commit (docs/design.md section 5.1): each entry completed exactly
 * as alone, once, with its event, whatever else shares its statement.
 */

let env: BrokerEnv;
let journal: AckJournal;

beforeAll(async () => {
  env = await BrokerEnv.open('embedded');
  journal = new AckJournal(env.context());
});

afterAll(async () => {
  await env?.close();
});

interface Opening {
  device: DeviceAccount;
  entry: OpenEntry;
}

async function openings(count: number): Promise<Opening[]> {
  const made: Opening[] = [];
  for (let i = 0; i < count; i++) {
    const device = await insertDevice(env.db);
    made.push({ device, entry: await insertOpenEntry(env.db, device.id) });
  }
  return made;
}

function ackOf({ device, entry }: Opening, outcome: Ack['outcome'] = 'opened', reason?: Ack['reason']): Ack {
  return signAck(device.key, {
    v: PROTOCOL_VERSION,
    command_id: entry.commandId,
    device_id: device.id,
    outcome,
    ...(reason ? { reason } : {}),
    received_at: 1_700_000_000_000,
    finished_at: 1_700_000_000_250,
  });
}

const entryOf = (opening: Opening) =>
  env.db
    .selectFrom('journal')
    .select(['outcome', 'detail', 'acked_at', 'ack'])
    .where('id', '=', opening.entry.journalId)
    .executeTakeFirstOrThrow();

const eventsOf = async (opening: Opening) =>
  (await env.db.selectFrom('events').select(['type', 'data']).execute()).filter(
    (event) => (event.data as { journal_id?: number }).journal_id === opening.entry.journalId,
  );

describe('acknowledgements written together', () => {
  it('completes twenty controllers’ entries arriving at once, each with its outcome, time and event', async () => {
    const made = await openings(20);
    const acks = made.map((opening, i) =>
      i % 5 === 0 ? ackOf(opening, 'failed', 'relay_fault') : ackOf(opening),
    );
    const applied = await Promise.all(acks.map((ack) => journal.apply(ack)));
    expect(applied).toEqual(made.map(() => true));
    for (const [i, opening] of made.entries()) {
      const entry = await entryOf(opening);
      expect(entry.outcome).toBe(i % 5 === 0 ? 'device_error' : 'opened');
      expect(entry.detail).toBe(i % 5 === 0 ? 'relay_fault' : null);
      expect(entry.acked_at?.getTime()).toBe(1_700_000_000_250);
      // The signed ack is kept on its entry, the first step of its receipt (docs/design.md section 5.3).
      expect(entry.ack).toEqual(acks[i]);
      expect((await eventsOf(opening)).map((event) => event.type)).toEqual([
        i % 5 === 0 ? 'open.failed' : 'open.succeeded',
      ]);
    }
  });

  it('applies an ack sent twice in one batch once, and one naming another device’s command not at all', async () => {
    const [first, second] = await openings(2);
    const stolen = { ...ackOf(first!), device_id: second!.device.id };
    const applied = await Promise.all([
      journal.apply(ackOf(first!)),
      journal.apply(ackOf(first!)),
      journal.apply(stolen),
    ]);
    expect(applied).toEqual([true, false, false]);
    expect(await eventsOf(first!)).toHaveLength(1);
    expect((await entryOf(second!)).outcome).toBeNull();
  });

  it('says an ack came late when it replaces the caller’s timeout verdict, alone or in company', async () => {
    const made = await openings(3);
    for (const opening of made) {
      await completeEntry(
        env.db,
        { id: opening.entry.journalId },
        { outcome: 'device_timeout', detail: null, ackedAt: null, now: new Date() },
      );
    }
    await Promise.all([
      journal.apply(ackOf(made[0]!)),
      journal.apply(ackOf(made[1]!, 'failed', 'no_network')),
    ]);
    await journal.apply(ackOf(made[2]!));
    expect((await entryOf(made[0]!)).detail).toBe("acknowledged after the caller's timeout");
    expect((await entryOf(made[1]!)).detail).toBe("no_network; acknowledged after the caller's timeout");
    expect((await entryOf(made[2]!)).detail).toBe("acknowledged after the caller's timeout");
    expect((await entryOf(made[0]!)).outcome).toBe('opened');
  });
});
