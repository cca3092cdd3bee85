import type { PhoneCall } from '../../../shared/protocol/messages.js';
import type { EntryOutcome } from './entry-outcome.js';

/**
 * Every outcome of a journal entry in the words a customer reads (docs/design.md sections 5 and 10.5), in one
 * place, so that the journal page, its filter and the CSV export never disagree. What `pending` is, is
 * entry-outcome.ts's.
 */

/** Each outcome's words; a controller's fault adds its detail after the colon (outcomeWords). */
export const OUTCOME_WORDS: Readonly<Record<EntryOutcome, string>> = {
  opened: 'Opened',
  revoked: 'Refused: access withdrawn',
  expired: 'Refused: key expired',
  rate_limit: 'Refused: too many openings',
  forbidden: 'Refused: not in the key',
  not_started: 'Refused: before the start you set',
  outside_hours: 'Refused: outside the hours you allowed',
  openings_used: 'Refused: all the openings you allowed were used',
  device_offline: 'Not opened: controller offline',
  device_timeout: 'No answer from the controller',
  device_error: 'Controller reported a fault',
  denied: 'Not opened: denied when asked',
  not_answered: 'Not opened: nobody answered in time',
  pending: 'In progress',
};

/** Every outcome, in the order the filter offers them; the record above makes sure none is missing. */
export const ENTRY_OUTCOMES = Object.keys(OUTCOME_WORDS) as [EntryOutcome, ...EntryOutcome[]];

/**
 * The outcome as a customer reads it: "Controller reported a fault: relay_fault" names the fault. An opening of
 * a gate that opens on a call from the customer's phone (`phoneCall` set, docs/design.md section 12.6) is what
 * the phone did, a call, not a gate seen opening.
 */
export function outcomeWords(
  outcome: EntryOutcome,
  detail: string | null,
  phoneCall?: JournalPhoneCall | null,
): string {
  if (outcome === 'opened' && phoneCall) return CALLED_WORDS;
  const words = OUTCOME_WORDS[outcome];
  return outcome === 'device_error' && detail ? `${words}: ${detail}` : words;
}

export const CALLED_WORDS = 'Called the gate from your phone';

/**
 * What became of an opening's call: what the phone's call log showed (the acknowledgement's `call`), or `tapped`
 * when someone of the household dialled the gate by hand while the phone's controller was offline
 * (docs/design.md section 10.9).
 */
export type JournalPhoneCall = PhoneCall | 'tapped';

/** What became of the call, said beside the outcome. */
export const PHONE_CALL_WORDS: Readonly<Record<JournalPhoneCall, string>> = {
  tapped: 'The phone\'s controller was offline: the call was dialled by hand from "Call the gate".',
  answered: 'The gate answered the call.',
  unanswered: 'The gate did not pick up: most gates open by turning the call away.',
  placed: "The call was placed; the phone's call log did not say how it ended.",
};

/** Whether the gate opened, failed to, or is still being asked: the tone the page gives the outcome. */
export function outcomeTone(outcome: EntryOutcome): 'ok' | 'bad' | 'wait' {
  if (outcome === 'opened') return 'ok';
  if (outcome === 'pending') return 'wait';
  return 'bad';
}

/**
 * The detail worth a second line beside the outcome's words: a fault's detail is already in them; any other
 * (an acknowledgement that came after the caller's timeout, a verdict of the sweep) is said apart.
 */
export function extraDetail(outcome: EntryOutcome, detail: string | null): string | null {
  return outcome === 'device_error' ? null : detail;
}
