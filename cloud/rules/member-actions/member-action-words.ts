import type { MemberActionName } from '../../foundation/db/schema.js';
import type { RecordLine } from '../../foundation/web/record-lines.js';
import type { MemberAction } from './member-actions.js';

/**
 * Each action of the members' record as a sentence follows the member's name (docs/design.md section 11.8):
 * "Ann <ann@example.com> rotated the signing secret …k3Xa". The company area and the console say it alike.
 */
export const MEMBER_ACTION_WORDS: Record<MemberActionName, string> = {
  registered: 'registered the company',
  details: 'changed',
  'asked-again': 'asked the operators again',
  'key-checked': 'checked the key file, finding key',
  'key-proven': 'proved holding key',
  'key-rotation-confirmed': 'confirmed the new key',
  'secret-issued': 'issued an API secret',
  'sandbox-secret-issued': 'issued a sandbox secret',
  'secret-expired': 'expired the old API secret',
  'endpoint-added': 'added the callback address',
  'callback-saved': 'set the callback address to',
  'callback-removed': 'removed the callback address',
  'callback-kinds': 'chose the kinds of event the callback takes:',
  'signing-secret-made': 'made a signing secret',
  'signing-secret-expired': 'expired the old signing secret',
  'test-event': 'sent a test event',
  'event-resent': 'sent an event again',
  'retry-now': 'pressed Retry now, for',
  'logo-saved': 'uploaded a logo',
  'logo-removed': 'removed the logo',
  'member-added': 'added',
  'member-removed': 'removed',
  'member-role': 'made',
  'owner-transferred': 'handed the company to',
  'sandbox-granted': 'granted the request',
  'sandbox-withdrawn': 'withdrew key',
  'sandbox-outcome': "chose what the barrier's next openings come to:",
};

export function isMemberActionName(text: string): text is MemberActionName {
  return Object.hasOwn(MEMBER_ACTION_WORDS, text);
}

/**
 * The sentence of one action: the member, what they did, and what it concerned; an action in the sandbox says
 * so first ("In the sandbox, Ann … set the callback address to …").
 */
export function memberActionSentence(action: {
  member: string;
  action: MemberActionName;
  detail: string | null;
  sandbox?: boolean;
}): string {
  const words = `${action.member} ${MEMBER_ACTION_WORDS[action.action]}`;
  const sentence = action.detail ? `${words} ${action.detail}` : words;
  return action.sandbox ? `In the sandbox, ${sentence}` : sentence;
}

/** Members' actions as the pages list them, each anchored by its id. */
export function memberLines(actions: MemberAction[]): RecordLine[] {
  return actions.map((action) => ({
    key: action.id,
    id: `action-${action.id}`,
    sentence: memberActionSentence(action),
    at: action.at,
  }));
}
