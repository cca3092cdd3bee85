import { z } from 'zod';
import type { PhoneNetwork } from '../../shared/protocol/messages.js';

/**
 * The phone's SIM and mobile network as `termux-telephony-deviceinfo` prints them (TelephonyAPI.java,
 * termux/termux-api): one JSON object with, among others, `sim_state` (absent, network_locked, pin_required,
 * puk_required, ready, unknown, or Android's number for another state), `network_operator` (MCC and MNC of the
 * operator the phone is registered with, empty when it is registered with none, as in airplane mode or out of
 * coverage), `network_operator_name` and `network_type` (lte, nr, umts, edge, ..., unknown). It needs
 * READ_PHONE_STATE.
 */
export const telephonyInfoSchema = z.object({
  sim_state: z.string().max(32),
  network_operator: z.string().max(16).nullable(),
  network_operator_name: z.string().max(64).nullable(),
  network_type: z.string().max(32),
});
export type TelephonyInfo = z.infer<typeof telephonyInfoSchema>;

/**
 * Why the phone cannot place a call now, in the words of an opening's failure detail; null when it can as far
 * as Android says. Both are `no_network` (docs/design.md section 12.6): no SIM, a locked SIM and no network
 * all leave the gate out of reach.
 */
export function cannotCall(info: TelephonyInfo): string | null {
  if (info.sim_state === 'absent') return 'the phone has no SIM';
  if (info.sim_state === 'pin_required' || info.sim_state === 'puk_required')
    return `the SIM is locked (${info.sim_state}): unlock it on the phone`;
  if (info.sim_state === 'network_locked') return 'the SIM is refused by the phone (network_locked)';
  if (!info.network_operator)
    return 'the phone is registered with no network (airplane mode, or out of coverage)';
  return null;
}

/** The telemetry's `network` (shared/protocol/messages.ts), bounded to what the cloud takes. */
export function networkOf(info: TelephonyInfo): PhoneNetwork {
  const operator = printable(info.network_operator_name ?? '', 64);
  return {
    sim: printable(info.sim_state, 16),
    ...(operator !== '' && info.network_operator ? { operator } : {}),
    type: printable(info.network_type, 16),
  };
}

/** Whole characters only: a cut through a surrogate pair would leave text the cloud refuses. */
function printable(text: string, max: number): string {
  let out = '';
  for (const char of text.replace(/[\p{Cc}\p{Cs}]/gu, '')) {
    if (out.length + char.length > max) break;
    out += char;
  }
  return out;
}
