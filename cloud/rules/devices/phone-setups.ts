import { ApiError } from '../../../shared/errors.js';
import type { DeviceObject } from '../../../shared/protocol/messages.js';
import type { CloudContext } from '../../foundation/context.js';
import { insertDeviceRecord } from './devices.js';

/**
 * A customer sets up their own phone as the controller of a gate that opens on a call from it (docs/design.md
 * section 9.3). No operator takes part: the gate trusts the customer's number, so the only controller that can
 * open it is the customer's phone, and the customer alone can set it up. The provisioning code is bound to their
 * account, so that provisioning pairs the controller to it at once, and whoever else comes by the code gains
 * nothing: the controller it provisions is the account's, not theirs.
 */

/** The record's label, until provisioning names the barrier after the gate the phone dials. */
export const PHONE_SETUP_LABEL = 'Phone controller';

/**
 * Starts a set-up: a device record waiting for the phone, with its code (24 hours, once). A set-up started
 * before and not used yet is replaced, so that an account holds one waiting code at a time, however often the
 * page is asked.
 */
export async function startPhoneSetup(
  ctx: CloudContext,
  input: { customerId: number; timeZone?: string | undefined },
) {
  const now = ctx.clock.now();
  return ctx.db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('devices')
      .where('setup_customer_id', '=', input.customerId)
      .where('provisioned_at', 'is', null)
      .execute();
    return insertDeviceRecord(trx, now, {
      label: PHONE_SETUP_LABEL,
      setupCustomerId: input.customerId,
      ...(input.timeZone === undefined ? {} : { timeZone: input.timeZone }),
    });
  });
}

/**
 * What a customer's own code may provision: a phone dialling gates and nothing else. A controller with relays or
 * a modem is installed by someone the operator knows, with an operator's code.
 */
export function checkPhoneSetup(objects: readonly DeviceObject[]): void {
  if (objects.every((object) => object.kind === 'phone')) return;
  throw new ApiError('invalid_field', {
    field: 'objects',
    message:
      "This code is a customer's own and sets up a phone that calls the gate: every object must be of kind phone. For a controller with relays or a modem, ask your installer for a provisioning code.",
  });
}
