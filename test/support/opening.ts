import type { Caller } from '../../cloud/rules/call-auth/authenticate.js';
import {
  type CommandDispatcher,
  type DispatchRequest,
  type DispatchResult,
  signOpenCommand,
} from '../../cloud/rules/opening/dispatcher.js';
import { type Ack, type Command, PROTOCOL_VERSION } from '../../shared/protocol/messages.js';
import { signAck } from '../../shared/protocol/signing.js';
import { type BrokerEnv, insertOpenEntry, type OpenEntry } from './broker-env.js';
import type { DeviceAccount } from './fake-device.js';

/**
 * What the open flow's own suites share: a company allowed to open one object of a device, and controller
 * links that stand in for the broker where the broker is not what is tested.
 */

/** An approved company whose key holds the device's object, and the caller that opens it as that company. */
export async function openingCaller(
  env: BrokerEnv,
  device: DeviceAccount,
  actor = 'Driver 7',
): Promise<{ entry: OpenEntry; caller: Caller }> {
  const entry = await insertOpenEntry(env.db, device.id);
  await env.db.insertInto('key_objects').values({ key_id: entry.keyId, object_id: entry.objectId }).execute();
  const key = await env.db
    .selectFrom('keys')
    .select('company_id')
    .where('id', '=', entry.keyId)
    .executeTakeFirstOrThrow();
  const company = await env.db
    .updateTable('companies')
    .set({ status: 'approved' })
    .where('id', '=', key.company_id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return {
    entry,
    caller: {
      company,
      mode: 'secret',
      sandbox: false,
      body: { key_ref: entry.keyId, number_id: entry.objectId, actor },
    },
  };
}

/** The device's signed acknowledgement that it opened for `command`. */
export function openedAck(device: DeviceAccount, command: Command): Ack {
  return signAck(device.key, {
    v: PROTOCOL_VERSION,
    command_id: command.id,
    device_id: command.device_id,
    outcome: 'opened',
    received_at: Date.now(),
    finished_at: Date.now(),
  });
}

/** A controller link that acknowledges every command at once, and keeps what it was asked to send. */
export class AckingDispatcher implements CommandDispatcher {
  readonly sent: Command[] = [];

  constructor(
    private readonly env: BrokerEnv,
    private readonly device: DeviceAccount,
  ) {}

  sign(request: DispatchRequest): Command {
    return signOpenCommand(this.env.serviceKey, request, Date.now());
  }

  async send(command: Command): Promise<DispatchResult> {
    this.sent.push(command);
    return { kind: 'acked', ack: openedAck(this.device, command) };
  }
}
