import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../cloud/rules/call-auth/authenticate.js';
import { OPEN_EVENT_FIELDS } from '../../cloud/rules/events/event-data.js';
import { completeEntry } from '../../cloud/rules/journal/journal.js';
import type { CommandDispatcher, DispatchResult } from '../../cloud/rules/opening/dispatcher.js';
import { Opener } from '../../cloud/rules/opening/open.js';
import { BrokerEnv, insertOpenEntry, type OpenEntry } from '../support/broker-env.js';
import { insertDevice } from '../support/fake-device.js';
import { openingCaller } from '../support/opening.js';

/**
 * An opening's event is recorded by open_attempt (a refusal) or by complete_entry (an outcome), both through
 * open_event_data (cloud/rules/events/open-event.sql): a company reads the same fields whichever wrote it, and they
 * are the fields cloud/rules/events/event-data.ts declares.
 */

/** No command may leave in these tests: every opening here is refused before it would. */
const NO_DISPATCH: CommandDispatcher = {
  sign: () => {
    throw new Error('a refused opening must not sign a command');
  },
  send: (): Promise<DispatchResult> => Promise.reject(new Error('a refused opening must not send')),
};

let env: BrokerEnv;
let entry: OpenEntry;
let caller: Caller;

beforeAll(async () => {
  env = await BrokerEnv.open('embedded');
  const device = await insertDevice(env.db);
  ({ entry, caller } = await openingCaller(env, device, 'driver 7'));
});

afterAll(async () => {
  await env?.close();
});

/** The data of the one open event recorded for a journal entry. */
async function eventOf(journalId: number): Promise<{ type: string; data: Record<string, unknown> }> {
  const events = await env.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('type', 'in', ['open.failed', 'open.succeeded'])
    .execute();
  const mine = events
    .map((event) => ({ type: event.type, data: event.data as Record<string, unknown> }))
    .filter((event) => event.data.journal_id === journalId);
  expect(mine).toHaveLength(1);
  return mine[0]!;
}

const fieldsOf = (data: Record<string, unknown>) => Object.keys(data).sort();

describe('the data of an open event', () => {
  it('carries the same fields from complete_entry and from open_attempt, those event-data.ts declares', async () => {
    const completed = await completeEntry(
      env.db,
      { id: entry.journalId },
      { outcome: 'device_offline', detail: null, ackedAt: null, now: new Date() },
    );
    expect(completed).toBe(true);
    const fromCompletion = await eventOf(entry.journalId);

    await env.db.updateTable('keys').set({ revoked_at: new Date() }).where('id', '=', entry.keyId).execute();
    await expect(new Opener(env.context(), NO_DISPATCH).open(caller)).rejects.toMatchObject({
      code: 'revoked',
    });
    const refused = await env.db
      .selectFrom('journal')
      .select('id')
      .where('key_id', '=', entry.keyId)
      .where('outcome', '=', 'revoked')
      .executeTakeFirstOrThrow();
    const fromAttempt = await eventOf(refused.id);

    expect(fieldsOf(fromAttempt.data)).toEqual([...OPEN_EVENT_FIELDS].sort());
    expect(fieldsOf(fromCompletion.data)).toEqual(fieldsOf(fromAttempt.data));
    const code = fromCompletion.data.code;
    expect(fromCompletion).toEqual({
      type: 'open.failed',
      data: {
        code,
        ref: null,
        key_ref: entry.keyId,
        number_id: entry.objectId,
        actor: 'driver 7',
        journal_id: entry.journalId,
        outcome: 'device_offline',
      },
    });
    expect(fromAttempt).toEqual({
      type: 'open.failed',
      data: { ...fromCompletion.data, journal_id: refused.id, outcome: 'revoked' },
    });
  });

  it('adds detail, and only detail, when the entry has one', async () => {
    const device = await insertDevice(env.db);
    const failed = await insertOpenEntry(env.db, device.id);
    await completeEntry(
      env.db,
      { commandId: failed.commandId, deviceId: device.id },
      { outcome: 'device_error', detail: 'no_carrier', ackedAt: new Date(), now: new Date() },
    );
    const event = await eventOf(failed.journalId);
    expect(fieldsOf(event.data)).toEqual([...OPEN_EVENT_FIELDS, 'detail'].sort());
    expect(event.data).toMatchObject({ outcome: 'device_error', detail: 'no_carrier' });
  });
});
