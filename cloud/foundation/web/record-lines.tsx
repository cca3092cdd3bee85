import type { VNode } from 'preact';
import { Moment } from './readable-time.js';

/** One line of a record: who did what as a sentence, the reason given if any, and when. */
export interface RecordLine {
  key: string | number;
  /** The line's anchor on the page, if it has one. */
  id?: string;
  sentence: string;
  reason?: string | null;
  at: Date;
}

/**
 * A record of actions as the pages list them (docs/design.md sections 11.5 and 11.8): a sentence each, the
 * reason the company was given set apart, and the time in the reader's zone. The operators' history, a company's
 * activity and the console's view of it say their lines alike.
 */
export function RecordLines(props: { lines: RecordLine[] }): VNode {
  return (
    <ul class="list">
      {props.lines.map((line) => (
        <li key={line.key} id={line.id}>
          <div>{line.sentence}</div>
          {line.reason ? <p class="reason">{line.reason}</p> : null}
          <div class="muted small">
            <Moment date={line.at} />
          </div>
        </li>
      ))}
    </ul>
  );
}
