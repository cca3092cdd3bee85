import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../cloud/rules/call-auth/authenticate.js';
import { ObjectRoutes } from '../../cloud/rules/opening/object-routes.js';
import { Opener } from '../../cloud/rules/opening/open.js';
import { BrokerEnv } from '../support/broker-env.js';
import { type DeviceAccount, insertDevice } from '../support/fake-device.js';
import { AckingDispatcher, openingCaller } from '../support/opening.js';

/** Acknowledges at once, and holds each ack's journal write until the test lets it go. */
class HeldWriteDispatcher extends AckingDispatcher {
  readonly order: string[] = [];
  release = () => {};

  override async send(command: Parameters<AckingDispatcher['send']>[0]) {
    this.order.push(`sent ${this.sent.length + 1}`);
    return super.send(command);
  }

  journalWritten(): Promise<unknown> {
    return new Promise<void>((resolve) => {
      this.release = () => {
        this.order.push('first written');
        resolve();
      };
    });
  }
}

/* The open flow's memory of where objects' commands go: a help to speed, never a say in where they go. */
describe('the open flow', () => {
  let env: BrokerEnv;
  let device: DeviceAccount;
  let caller: (numberId: number) => Caller;
  let numberId: number;

  beforeAll(async () => {
    env = await BrokerEnv.open('embedded');
    device = await insertDevice(env.db);
    const opening = await openingCaller(env, device);
    numberId = opening.entry.objectId;
    caller = (number) => ({ ...opening.caller, body: { ...opening.caller.body, number_id: number } });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('sends the command where the database says, whatever was remembered', async () => {
    const routes = new ObjectRoutes();
    routes.remember(numberId, { deviceId: 'SOMEWHEREELSE', object: 'side-door' });
    const dispatcher = new AckingDispatcher(env, device);
    const answer = await new Opener(env.context(), dispatcher, routes).open(caller(numberId));
    expect(answer.status).toBe(200);
    expect(dispatcher.sent).toHaveLength(1);
    expect(dispatcher.sent[0]).toMatchObject({ device_id: device.id, object: 'gate', number_id: numberId });
    expect(routes.get(numberId)).toEqual({ deviceId: device.id, object: 'gate' });
  });

  it("waits, before a company's next opening, for the journal write of the one just answered", async () => {
    const dispatcher = new HeldWriteDispatcher(env, device);
    const opener = new Opener(env.context(), dispatcher);
    expect((await opener.open(caller(numberId))).status).toBe(200);
    const next = opener.open(caller(numberId));
    // Every chance to go ahead: a few round trips to the database, as many as its checks take.
    for (let i = 0; i < 5; i++) await sql`select 1`.execute(env.db);
    dispatcher.release();
    expect((await next).status).toBe(200);
    expect(dispatcher.order).toEqual(['sent 1', 'first written', 'sent 2']);
  });

  it('signs each opening of the same object as a command of its own', async () => {
    const dispatcher = new AckingDispatcher(env, device);
    const opener = new Opener(env.context(), dispatcher);
    for (let i = 0; i < 3; i++) expect((await opener.open(caller(numberId))).status).toBe(200);
    const ids = new Set(dispatcher.sent.map((command) => command.id));
    expect(ids.size).toBe(3);
    for (const command of dispatcher.sent) {
      expect(command).toMatchObject({ device_id: device.id, object: 'gate', number_id: numberId });
    }
  });
});
