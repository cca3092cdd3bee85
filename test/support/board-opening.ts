import { issueAccessKey } from '../../cloud/rules/access-keys/access-keys.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { pairDevice } from '../../cloud/rules/devices/devices.js';
import { claimRequest } from '../../cloud/rules/requests/claim.js';
import { type Answer, secretCompany, type TestCloud } from './cloud.js';

/** What `gatelink-device provision` printed for a board: its id, the customer's pairing code, the gate's number. */
export interface ProvisionedBoard {
  deviceId: string | undefined;
  pairingCode: string | undefined;
  gateNumberId: number;
}

export function provisionedBoard(stdout: string): ProvisionedBoard {
  return {
    deviceId: /Provisioned controller (\S+)\./.exec(stdout)?.[1],
    pairingCode: /Pairing code for the customer: (\S+)/.exec(stdout)?.[1],
    gateNumberId: Number(/gate: Main gate \(simulated\), number_id (\d+)/.exec(stdout)?.[1]),
  };
}

/** Whether the only controller of the cloud shows online to its operators. */
export async function boardOnline(cloud: TestCloud): Promise<boolean> {
  const devices = (await cloud.ops('GET', '/ops/devices')).body.devices as { online: boolean }[];
  return devices[0]?.online === true;
}

/**
 * The whole path to a board's first opening, as its users take it: a customer pairs the board with its code, a
 * company asks for access in secret mode, the customer grants its gate, and the company opens it.
 */
export async function openProvisionedBoard(
  cloud: TestCloud,
  board: ProvisionedBoard,
  who: { owner: string; actor: string },
): Promise<Answer> {
  const customerId = (await createCustomer(cloud.ctx, { displayName: who.owner })).id;
  await pairDevice(cloud.ctx, { customerId, pairingCode: board.pairingCode ?? '' });
  const company = await secretCompany(cloud, 'Courier Ltd');
  const code = (await cloud.call('request', company)).body.code as string;
  await claimRequest(cloud.ctx, { code, customerId });
  const { keyRef } = await issueAccessKey(cloud.ctx, {
    code,
    customerId,
    deviceId: board.deviceId ?? '',
    objectIds: [board.gateNumberId],
    keyExpiresAt: null,
  });
  return cloud.call('open', { ...company, key_ref: keyRef, number_id: board.gateNumberId, actor: who.actor });
}
