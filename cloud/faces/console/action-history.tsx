import type { VNode } from 'preact';
import { Moment } from '../../foundation/web/readable-time.js';
import type { OperatorAction } from '../../rules/operators/actions.js';

/**
 * The record of operator actions, a sentence each (docs/design.md section 11.5): who did what and when, with
 * the reason the company was given (a refusal, a suspension) set apart as the company reads it.
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

export function ActionHistory(props: { actions: OperatorAction[]; empty: string; title: string }): VNode {
  return (
    <section class="card" aria-labelledby="history-title">
      <h3 id="history-title">{props.title}</h3>
      {props.actions.length === 0 ? (
        <p class="muted">{props.empty}</p>
      ) : (
        <ul class="list">
          {props.actions.map((action, index) => {
            const { sentence, reason } = actionSentence(action);
            return (
              <li key={index}>
                <div>{sentence}</div>
                {reason ? <p class="reason">{reason}</p> : null}
                <div class="muted small">
                  <Moment date={action.at} />
                </div>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
