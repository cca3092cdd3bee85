import type { VNode } from 'preact';
import { RecordLines } from '../../foundation/web/record-lines.js';
import { operatorLines } from '../../rules/operators/action-words.js';
import type { OperatorAction } from '../../rules/operators/actions.js';

/**
 * The record of operator actions, a sentence each (docs/design.md section 11.5): who did what and when, with
 * the reason the company was given (a refusal, a suspension) set apart as the company reads it.
 */
export function ActionHistory(props: { actions: OperatorAction[]; empty: string; title: string }): VNode {
  return (
    <section class="card" aria-labelledby="history-title">
      <h3 id="history-title">{props.title}</h3>
      {props.actions.length === 0 ? (
        <p class="muted">{props.empty}</p>
      ) : (
        <RecordLines lines={operatorLines(props.actions)} />
      )}
    </section>
  );
}
