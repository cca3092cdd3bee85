import type { RecordLine } from '../../foundation/web/record-lines.js';
import type { OperatorAction } from './actions.js';

/**
 * Each operator action as a sentence (docs/design.md section 11.5): the console's history and a company's
 * activity page (section 11.8) say them alike, the company reading "Gatelink" for the operator.
 */
const ACTION_WORDS: Record<string, string> = {
  add: 'added the company',
  approve: 'approved the company',
  reject: 'refused approval',
  suspend: 'suspended the company',
  resume: 'resumed the company',
  secret: 'issued a secret',
  'confirm-key': "pinned the domain's current key",
  'grant-operator': 'gave operator rights to',
  'withdraw-operator': 'withdrew operator rights from',
};

/** Actions whose `reason` column names what they concerned (a key's fingerprint, an account) in the sentence. */
const NAMED_IN_SENTENCE: Record<string, string> = {
  approve: ', pinning key',
  'confirm-key': '',
  'grant-operator': '',
  'withdraw-operator': '',
};

export function actionSentence(action: OperatorAction): { sentence: string; reason: string | null } {
  const words = `${action.operator} ${ACTION_WORDS[action.action] ?? action.action}`;
  const join = NAMED_IN_SENTENCE[action.action];
  if (join === undefined) return { sentence: words, reason: action.reason };
  return { sentence: action.reason ? `${words}${join} ${action.reason}` : words, reason: null };
}

/** Operator actions as the pages list them, each with the reason the company was given; `as` names the operator. */
export function operatorLines(actions: OperatorAction[], as?: string): RecordLine[] {
  return actions.map((action, index) => ({
    key: index,
    ...actionSentence(as === undefined ? action : { ...action, operator: as }),
    at: action.at,
  }));
}
