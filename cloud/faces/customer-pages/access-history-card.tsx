import type { VNode } from 'preact';
import { Moment } from '../../foundation/web/readable-time.js';
import { type AccessHistoryLine, HISTORY_SHOWN } from '../../rules/access-keys/access-history.js';

/**
 * The barrier page's "History" card (docs/design.md section 10.4): the latest acts on its access, newest first,
 * each in words with who did it, since a barrier shared by several accounts has more than one "who".
 */
export function AccessHistoryCard(props: { lines: AccessHistoryLine[] }): VNode {
  const { lines } = props;
  return (
    <section class="card" aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      {lines.length === 0 ? (
        <p>No company has been given access to this barrier yet.</p>
      ) : (
        <>
          <ul class="list history">
            {lines.map((line, index) => (
              // Lines have no id of their own on the page; their order is fixed newest first.
              <li key={index}>
                <Moment date={line.at} />: {actWords(line)}
              </li>
            ))}
          </ul>
          {lines.length === HISTORY_SHOWN ? (
            <p class="muted small">The latest {HISTORY_SHOWN} changes.</p>
          ) : null}
        </>
      )}
    </section>
  );
}

/** "Anna Owner gave Demo Cleaning Ltd access", and the like. */
export function actWords(line: AccessHistoryLine): string {
  const { by, company } = line;
  if (by === null) {
    // Only a withdrawal happens with none of the barrier's customers doing it.
    return `${company}'s access ended when the controller changed hands or was replaced`;
  }
  switch (line.act) {
    case 'granted':
      return `${by} gave ${company} access`;
    case 'reshaped':
      return `${by} changed when ${company} may open`;
    case 'withdrawn':
      return `${by} withdrew ${company}'s access`;
  }
}
