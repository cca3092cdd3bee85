import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Ack, ackSchema } from '../../../shared/protocol/messages.js';
import { verifyAck } from '../../../shared/protocol/signing.js';
import { applyAck } from '../../journal/journal.js';
import type { DeviceMessageContext, IncomingDeviceMessage } from './handler.js';

/**
 * `.../ack`: a controller's signed acknowledgement. Checked in order: the schema, the device named inside
 * equals the topic's, the signature under that device's stored key. Then handed to this instance's waiting
 * dispatch, if any, which answers the company at once: the controller has spoken, and the gate is open or not.
 * The journal entry is completed meanwhile (once, by command id, whichever instance gets there first), and
 * this resolves only when it is: the broker accepts the ack no earlier (embedded: the controller keeps it on its
 * disk; external: the cloud's session keeps it, ../external-delivery.ts) until the journal holds it. A failure to
 * write it is thrown, and the ack comes again.
 */
export async function handleAck(deps: DeviceMessageContext, message: IncomingDeviceMessage): Promise<void> {
  const { ctx, keys, waiters } = deps;
  const { deviceId } = message;
  const parsed = ackSchema.safeParse(message.body);
  if (!parsed.success) {
    ctx.log.warn({ deviceId, issues: parsed.error.issues.length }, 'dropped a malformed acknowledgement');
    return;
  }
  const ack = parsed.data;
  if (ack.device_id !== deviceId) {
    ctx.log.warn({ deviceId, named: ack.device_id }, 'dropped an acknowledgement naming another device');
    return;
  }
  if (!(await verifiedBy(keys, deviceId, ack))) {
    ctx.log.warn({ deviceId, commandId: ack.command_id }, 'dropped an acknowledgement with a bad signature');
    return;
  }
  waiters.settle(ack);
  // The answer leaves first: on PGlite, which runs in this process, the write would otherwise hold it back.
  await nextTurn();
  const applied = await applyAck(ctx, ack);
  ctx.log.info({ deviceId, commandId: ack.command_id, outcome: ack.outcome, applied }, 'acknowledgement');
}

/** Verifies under the remembered key, and once more under the stored one in case the device was re-provisioned. */
async function verifiedBy(keys: DeviceMessageContext['keys'], deviceId: string, ack: Ack): Promise<boolean> {
  const remembered = await keys.forDevice(deviceId);
  if (remembered && verifyAck(remembered, ack)) return true;
  const stored = await keys.forDevice(deviceId, { fresh: true });
  return stored !== null && verifyAck(stored, ack);
}
