import type { VNode } from 'preact';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { QuestionView } from '../../rules/opening-questions/question-view.js';

/**
 * At the top of a barrier's page, the companies waiting for an answer before they may open (docs/design.md
 * section 10.8), each with Allow and Deny for whoever may grant: the same choice the notification offers, for a
 * phone without push or a notification dismissed; or, while the phone that calls the gate is offline, Call the
 * gate (section 10.9). Nothing when none waits.
 */
export function QuestionsCard(props: { page: PageContext; questions: QuestionView[] }): VNode | null {
  if (props.questions.length === 0) return null;
  return (
    <section class="card question" aria-labelledby="questions-title">
      <h2 id="questions-title">Waiting for your answer</h2>
      <ul class="list">
        {props.questions.map((question) => (
          <QuestionLine key={question.journalId} page={props.page} question={question} />
        ))}
      </ul>
    </section>
  );
}

function QuestionLine(props: { page: PageContext; question: QuestionView }): VNode {
  const { question } = props;
  const path = `/barriers/${encodeURIComponent(question.deviceId)}/questions/${question.journalId}`;
  return (
    <li>
      <p>
        <a href={path}>
          {question.company.name} asks to open{question.object ? ` ${question.object}` : ''}
        </a>{' '}
        for {question.actor}; answer by <Moment date={question.answerBy} seconds />.
      </p>
      {question.asks === 'call' ? (
        <p class="muted small">Your phone that calls the gate is offline: call the gate yourself.</p>
      ) : null}
      {question.mayAnswer && question.asks === 'call' ? (
        <form method="post" action={path} class="actions" data-call-form>
          <CsrfField page={props.page} />
          <button type="submit" name="answer" value="call">
            Call the gate
          </button>
        </form>
      ) : question.mayAnswer ? (
        <form method="post" action={path} class="actions">
          <CsrfField page={props.page} />
          <button type="submit" name="answer" value="allow">
            Allow
          </button>
          <button type="submit" name="answer" value="deny" class="danger">
            Deny
          </button>
        </form>
      ) : null}
    </li>
  );
}
