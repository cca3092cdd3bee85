import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AssembledContext } from '../../cloud/context.js';
import { handleOpenIdempotently } from '../../cloud/faces/company-api/open-idempotency.js';
import type { Caller } from '../../cloud/rules/call-auth/authenticate.js';
import { claimIdempotencyKey } from '../../cloud/rules/idempotency/idempotency.js';
import { applyAck } from '../../cloud/rules/journal/journal.js';
import {
  type CommandDispatcher,
  type DispatchRequest,
  type DispatchResult,
  signOpenCommand,
} from '../../cloud/rules/opening/dispatcher.js';
import { Opener } from '../../cloud/rules/opening/open.js';
import { SETTLE_GRACE_MS, SETTLED_DETAIL, UnansweredOpenings } from '../../cloud/rules/opening/unanswered.js';
import type { Command } from '../../shared/protocol/messages.js';
import { BrokerEnv } from '../support/broker-env.js';
import { FakeClock } from '../support/clock.js';
import { type DeviceAccount, insertDevice } from '../support/fake-device.js';
import { AckingDispatcher, openedAck, openingCaller } from '../support/opening.js';

/**
 * A cloud instance that dies between sending an opening's command and answering it leaves a journal entry
 * without outcome and an Idempotency-Key claim without answer. Another instance settles both (cloud/README.md,
 * "When a cloud instance dies mid-open").
 */

const ACK_TIMEOUT_MS = 8000;
const PAST_DEADLINE_MS = ACK_TIMEOUT_MS + SETTLE_GRACE_MS + 1;

/** A controller link whose instance dies once the command is out: it never answers. */
class DyingDispatcher implements CommandDispatcher {
  readonly sent: Command[] = [];
  #onSent: () => void = () => {};

  constructor(private readonly env: BrokerEnv) {}

  sign(request: DispatchRequest): Command {
    return signOpenCommand(this.env.serviceKey, request, Date.now());
  }

  send(command: Command): Promise<DispatchResult> {
    this.sent.push(command);
    this.#onSent();
    return new Promise(() => {});
  }

  /** Resolves once a command has gone out: the moment the instance dies. */
  nextSend(): Promise<void> {
    return new Promise((done) => {
      this.#onSent = done;
    });
  }
}

describe('[attack:journal.pending-after-crash] openings left unanswered by an instance that died', () => {
  let env: BrokerEnv;
  let device: DeviceAccount;
  let clock: FakeClock;
  let ctx: AssembledContext;
  let caller: Caller;
  let keyCount = 0;

  beforeAll(async () => {
    env = await BrokerEnv.open('embedded');
    device = await insertDevice(env.db);
    caller = (await openingCaller(env, device)).caller;
  });

  afterAll(async () => {
    await env?.close();
  });

  beforeEach(() => {
    clock = new FakeClock();
    ctx = { ...env.context(), clock };
  });

  const idempotency = () => {
    keyCount += 1;
    return { key: `retry-${keyCount}`, bodyHash: `hash-${keyCount}` };
  };

  /** An open with an Idempotency-Key on an instance that dies once the command is out. */
  async function openAndDie(key: { key: string; bodyHash: string }): Promise<Command> {
    const dispatcher = new DyingDispatcher(env);
    const sent = dispatcher.nextSend();
    void handleOpenIdempotently(ctx, new Opener(ctx, dispatcher), caller, key);
    await sent;
    return dispatcher.sent[0]!;
  }

  const entryOf = (command: Command) =>
    env.db
      .selectFrom('journal')
      .select(['id', 'outcome', 'detail', 'acked_at'])
      .where('command_id', '=', command.id)
      .executeTakeFirstOrThrow();

  const eventsOf = (journalId: number) =>
    env.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('type', 'in', ['open.failed', 'open.succeeded'])
      .execute()
      .then((events) => events.filter((e) => (e.data as { journal_id?: number }).journal_id === journalId));

  it('settles the entry as device_timeout past the deadline, and a retry gets that answer without opening again', async () => {
    const key = idempotency();
    const command = await openAndDie(key);
    expect((await entryOf(command)).outcome).toBeNull();

    clock.advance(PAST_DEADLINE_MS);
    const survivor = new UnansweredOpenings(ctx, ACK_TIMEOUT_MS);
    const settled = await survivor.settle();
    expect(settled.entries).toBeGreaterThanOrEqual(1);

    const entry = await entryOf(command);
    expect(entry).toMatchObject({ outcome: 'device_timeout', detail: SETTLED_DETAIL });
    expect(await eventsOf(entry.id)).toMatchObject([{ type: 'open.failed' }]);

    const retrying = new AckingDispatcher(env, device);
    const answer = await handleOpenIdempotently(ctx, new Opener(ctx, retrying), caller, key);
    expect(answer).toMatchObject({ status: 504, body: { error: 'device_timeout' } });
    expect(retrying.sent).toHaveLength(0);
  });

  it('settles a request to call the gate by its tap: opened when someone tapped, device_offline when nobody did', async () => {
    const tapped = await openAndDie(idempotency());
    const untapped = await openAndDie(idempotency());
    // The instance found the phone offline and asked the household to call the gate (docs/design.md 10.9).
    for (const [command, answer] of [
      [tapped, 'called'],
      [untapped, 'unanswered'],
    ] as const) {
      const entry = await entryOf(command);
      await env.db
        .insertInto('opening_questions')
        .values({
          journal_id: entry.id,
          device_id: device.id,
          kind: 'call',
          asked_at: clock.now(),
          answer_by: new Date(clock.now().getTime() + 60_000),
          answer,
          answered_at: clock.now(),
        })
        .execute();
    }
    clock.advance(PAST_DEADLINE_MS);
    await new UnansweredOpenings(ctx, ACK_TIMEOUT_MS).settle();
    const opened = await entryOf(tapped);
    expect(opened.outcome).toBe('opened');
    expect(await eventsOf(opened.id)).toMatchObject([{ type: 'open.succeeded' }]);
    expect((await entryOf(untapped)).outcome).toBe('device_offline');
  });

  it('turns a settled entry into opened when the acknowledgement arrives after all', async () => {
    const command = await openAndDie(idempotency());
    clock.advance(PAST_DEADLINE_MS);
    await new UnansweredOpenings(ctx, ACK_TIMEOUT_MS).settle();

    expect(await applyAck(ctx, openedAck(device, command))).toBe(true);

    const entry = await entryOf(command);
    expect(entry.outcome).toBe('opened');
    expect(entry.acked_at).not.toBeNull();
  });

  it('gives a claim the outcome its acknowledgement brought, when the ack beat the sweep', async () => {
    const key = idempotency();
    const command = await openAndDie(key);
    // The controller's ack reaches another instance, which journals it; nobody answers the caller.
    expect(await applyAck(ctx, openedAck(device, command))).toBe(true);
    clock.advance(PAST_DEADLINE_MS);
    await new UnansweredOpenings(ctx, ACK_TIMEOUT_MS).settle();

    const entry = await entryOf(command);
    const retrying = new AckingDispatcher(env, device);
    const answer = await handleOpenIdempotently(ctx, new Opener(ctx, retrying), caller, key);
    expect(answer).toEqual({ status: 200, body: { ok: 1, id: entry.id } });
    expect(retrying.sent).toHaveLength(0);
  });

  it('releases a claim whose instance died before anything reached the gate, so that a retry opens', async () => {
    const key = idempotency();
    const claim = { ...key, companyId: caller.company.id, action: 'open', commandId: crypto.randomUUID() };
    await env.db.transaction().execute((trx) => claimIdempotencyKey(ctx, trx, claim));
    // Until the sweep, a retry finds the call in flight.
    const early = handleOpenIdempotently(
      ctx,
      new Opener(ctx, new AckingDispatcher(env, device)),
      caller,
      key,
    );
    await expect(early).rejects.toMatchObject({ code: 'idempotency_in_progress' });

    clock.advance(PAST_DEADLINE_MS);
    expect((await new UnansweredOpenings(ctx, ACK_TIMEOUT_MS).settle()).claims).toBeGreaterThanOrEqual(1);

    const retrying = new AckingDispatcher(env, device);
    const answer = await handleOpenIdempotently(ctx, new Opener(ctx, retrying), caller, key);
    expect(answer).toMatchObject({ status: 200, body: { ok: 1 } });
    expect(retrying.sent).toHaveLength(1);
  });

  it('leaves an opening alone while its own instance may still answer', async () => {
    const key = idempotency();
    const command = await openAndDie(key);
    clock.advance(ACK_TIMEOUT_MS);
    await new UnansweredOpenings(ctx, ACK_TIMEOUT_MS).settle();

    expect((await entryOf(command)).outcome).toBeNull();
    const retry = handleOpenIdempotently(
      ctx,
      new Opener(ctx, new AckingDispatcher(env, device)),
      caller,
      key,
    );
    await expect(retry).rejects.toMatchObject({ code: 'idempotency_in_progress' });
  });

  it('settles an entry once when two instances sweep it', async () => {
    const command = await openAndDie(idempotency());
    clock.advance(PAST_DEADLINE_MS);
    await Promise.all([
      new UnansweredOpenings(ctx, ACK_TIMEOUT_MS).settle(),
      new UnansweredOpenings(ctx, ACK_TIMEOUT_MS).settle(),
    ]);
    const entry = await entryOf(command);
    expect(entry.outcome).toBe('device_timeout');
    expect(await eventsOf(entry.id)).toHaveLength(1);
  });
});
