import type { VNode } from 'preact';
import { CsrfField, Layout, type PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { QuestionView } from '../../rules/opening-questions/question-view.js';
import { CompanyMark } from './company-mark.js';

/**
 * `/barriers/<id>/questions/<entry>` (docs/design.md section 10.8): a company asks to open the barrier and waits
 * for the answer. Whoever may grant answers Allow or Deny with one press; the first answer counts, and the page
 * says whose it was once there is one. The service worker answers through this same form from a notification's
 * buttons, so the form is the one way an answer is given.
 */
export function QuestionPage(props: { page: PageContext; question: QuestionView; path: string }): VNode {
  const { question, page } = props;
  const heading = `${question.company.name} asks to open ${question.barrier}`;
  return (
    <Layout title={heading} page={page}>
      <section class="card question" aria-labelledby="question-title">
        <CompanyMark company={question.company} />
        <h1 id="question-title">{heading}</h1>
        <p>
          For <strong>{question.actor}</strong>
          {question.object ? <> · {question.object}</> : null} · asked{' '}
          <Moment date={question.askedAt} seconds />
        </p>
        <QuestionState {...props} />
      </section>
      <p>
        <a href={`/barriers/${encodeURIComponent(question.deviceId)}`}>Back to {question.barrier}</a>
      </p>
    </Layout>
  );
}

function QuestionState(props: { page: PageContext; question: QuestionView; path: string }): VNode {
  const { question } = props;
  const { state } = question;
  if (state.kind === 'open' && question.mayAnswer) {
    return (
      <form method="post" action={props.path} data-question-form>
        <CsrfField page={props.page} />
        <p class="muted small">
          The gate stays shut unless you allow it by <Moment date={question.answerBy} seconds />.
        </p>
        <div class="actions">
          <button type="submit" name="answer" value="allow">
            Allow
          </button>
          <button type="submit" name="answer" value="deny" class="danger">
            Deny
          </button>
        </div>
      </form>
    );
  }
  if (state.kind === 'open') {
    return (
      <p>
        Waiting for the owner, or someone they let grant access, to answer by{' '}
        <Moment date={question.answerBy} seconds />.
      </p>
    );
  }
  if (state.kind === 'unanswered') {
    return <p class="notice">Nobody answered in time: the gate stayed shut.</p>;
  }
  const verb = state.kind === 'allowed' ? 'Allowed' : 'Denied: the gate stayed shut';
  return (
    <p class="notice" data-answer={state.kind}>
      {verb}
      {state.by ? <> — answered by {state.by}</> : null} at <Moment date={state.at} seconds />.
    </p>
  );
}
