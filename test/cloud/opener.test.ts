import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../cloud/auth/authenticate.js';
import {
  type CommandDispatcher,
  type DispatchRequest,
  type DispatchResult,
  signOpenCommand,
} from '../../cloud/opening/dispatcher.js';
import { ObjectRoutes } from '../../cloud/opening/object-routes.js';
import { Opener } from '../../cloud/opening/open.js';
import { type Command, PROTOCOL_VERSION } from '../../shared/protocol/messages.js';
import { signAck } from '../../shared/protocol/signing.js';
import { BrokerEnv, insertOpenEntry } from '../support/broker-env.js';
import { type DeviceAccount, insertDevice } from '../support/fake-device.js';

/** A controller link that acknowledges every command at once, and keeps what it was asked to send. */
class AckingDispatcher implements CommandDispatcher {
  readonly sent: Command[] = [];

  constructor(
    private readonly env: BrokerEnv,
    private readonly device: DeviceAccount,
  ) {}

  sign(request: DispatchRequest): Command {
    return signOpenCommand(this.env.signingKey, request, Date.now());
  }

  async send(command: Command): Promise<DispatchResult> {
    this.sent.push(command);
    const ack = signAck(this.device.key, {
      v: PROTOCOL_VERSION,
      command_id: command.id,
      device_id: command.device_id,
      outcome: 'opened',
      received_at: Date.now(),
      finished_at: Date.now(),
    });
    return { kind: 'acked', ack };
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
    const entry = await insertOpenEntry(env.db, device.id);
    numberId = entry.objectId;
    const key = await env.db
      .selectFrom('keys')
      .select(['id', 'company_id'])
      .where('id', '=', entry.keyId)
      .executeTakeFirstOrThrow();
    await env.db.insertInto('key_objects').values({ key_id: key.id, object_id: numberId }).execute();
    const company = await env.db
      .updateTable('companies')
      .set({ status: 'approved' })
      .where('id', '=', key.company_id)
      .returningAll()
      .executeTakeFirstOrThrow();
    caller = (number) => ({
      company,
      mode: 'secret',
      body: { key_ref: key.id, number_id: number, actor: 'Driver 7' },
    });
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
