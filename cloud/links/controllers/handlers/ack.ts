import { type Ack, ackSchema } from '../../../../shared/protocol/messages.js';
import { verifyAck } from '../../../../shared/protocol/signing.js';
import type { DeviceMessageHandler } from './handler.js';
import { verifiedBy } from './verified-by.js';

/**
 * `.../ack`: a controller's signed acknowledgement. Past the dispatcher's checks (the schema, the device named
 * inside equals the topic's), checked under that device's stored key. Then handed to this instance's waiting
 * dispatch, if any, which answers the company at once: the controller has spoken, and the gate is open or not.
 * The journal entry is completed meanwhile (once, by command id, whichever instance gets there first; with
 * other controllers' acks in one commit, docs/design.md section 5.1), and
 * this resolves only when it is: the broker accepts the ack no earlier (embedded: the controller keeps it on its
 * disk; external: the cloud's session keeps it, ../external-delivery.ts) until the journal holds it. A failure to
 * write it is thrown, and the ack comes again.
 */
export const ackHandler: DeviceMessageHandler<Ack> = {
  schema: ackSchema,
  malformed: 'dropped a malformed acknowledgement',
  foreign: 'dropped an acknowledgement naming another device',
  async handle(deps, deviceId, ack) {
    const { ctx, keys, waiters, acks } = deps;
    if (!(await verifiedBy(keys, deviceId, (key) => verifyAck(key, ack)))) {
      ctx.log.warn(
        { deviceId, commandId: ack.command_id },
        'dropped an acknowledgement with a bad signature',
      );
      return;
    }
    // The answer leaves first, as the write starts on the next turn of the event loop (a batch does): on
    // PGlite, which runs in this process, it would otherwise hold the answer back. The dispatch gets the write,
    // so the company's next opening waits for it (docs/design.md section 6).
    const written = acks.apply(ack);
    waiters.settle(ack, written);
    const applied = await written;
    ctx.log.info({ deviceId, commandId: ack.command_id, outcome: ack.outcome, applied }, 'acknowledgement');
  },
};
