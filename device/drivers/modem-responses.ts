import type { AtResponse } from './at-channel.js';
import type { DriverFailure, OpenOutcome } from './driver.js';

/**
 * What the modem's answers mean (3GPP TS 27.007): registration, signal quality, the calls in progress, and the
 * final result codes of a call that did not ring. The GSM driver (modem-gsm.ts) asks; this file reads.
 */

/** +CLCC: <idx>,<dir>,<stat>,<mode>,<mpty>[,<number>,<type>] */
export interface CallLine {
  index: number;
  outgoing: boolean;
  stat: number;
}

/** Call states of +CLCC (27.007 7.18). */
export const CLCC_ACTIVE = 0;
export const CLCC_ALERTING = 3;

export function failure(code: string): OpenOutcome {
  const reasons: Record<string, DriverFailure> = {
    BUSY: 'busy',
    'NO CARRIER': 'no_carrier',
    'NO ANSWER': 'no_answer',
    'NO DIALTONE': 'no_network',
  };
  const reason = reasons[code] ?? (isNoNetworkError(code) ? 'no_network' : 'modem_error');
  return { outcome: 'failed', reason, detail: code };
}

/** +CME ERROR 30 (no network service), 31 (network timeout), 32 (emergency calls only). */
function isNoNetworkError(code: string): boolean {
  const match = /^\+CME ERROR:\s*(\d+)/.exec(code);
  return match !== null && ['30', '31', '32'].includes(match[1]!);
}

/** +CREG: <n>,<stat>: 1 registered at home, 5 roaming; null when the answer has no such line. */
export function parseRegistration(response: AtResponse): boolean | null {
  for (const line of response.lines) {
    const match = /^\+CREG:\s*(?:\d+\s*,\s*)?(\d+)/.exec(line);
    if (match) return match[1] === '1' || match[1] === '5';
  }
  return null;
}

/** +CSQ: <rssi>,<ber>: rssi 0..31, 99 unknown. */
export function parseSignal(response: AtResponse): number | null {
  for (const line of response.lines) {
    const match = /^\+CSQ:\s*(\d+)/.exec(line);
    if (match) {
      const rssi = Number(match[1]);
      return rssi >= 0 && rssi <= 31 ? rssi : null;
    }
  }
  return null;
}

export function parseCalls(lines: readonly string[]): CallLine[] {
  const calls: CallLine[] = [];
  for (const line of lines) {
    const match = /^\+CLCC:\s*(\d+)\s*,\s*(\d)\s*,\s*(\d)/.exec(line);
    if (match) calls.push({ index: Number(match[1]), outgoing: match[2] === '0', stat: Number(match[3]) });
  }
  return calls;
}
