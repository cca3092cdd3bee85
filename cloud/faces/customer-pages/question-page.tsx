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
  if (question.asks === 'call') return <CallState {...props} />;
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

/**
 * A request to call the gate (docs/design.md section 10.9): the phone's controller is offline, so whoever may
 * grant calls the gate from the phone in their hand. The button records the tap and the answer dials (a 303 to
 * `tel:`); the gate opens for the numbers it knows, which the page says, since a call from another phone does
 * nothing.
 */
function CallState(props: { page: PageContext; question: QuestionView; path: string }): VNode {
  const { question } = props;
  const { state } = question;
  if (state.kind === 'open' && question.mayAnswer) {
    return (
      <form method="post" action={props.path} data-call-form>
        <CsrfField page={props.page} />
        <p>
          Your phone that calls the gate is offline, so it cannot open it for them. Call the gate yourself by{' '}
          <Moment date={question.answerBy} seconds />, or it stays shut.
        </p>
        <p class="muted small">
          The gate opens for the numbers it knows: call from the phone whose number it has
          {question.gateNumber ? <> ({question.gateNumber} is the gate's)</> : null}.
        </p>
        <div class="actions">
          <button type="submit" name="answer" value="call">
            Call the gate
          </button>
        </div>
      </form>
    );
  }
  if (state.kind === 'open') {
    return (
      <p>
        The phone that calls the gate is offline. Waiting for the owner, or someone they let grant access, to
        call the gate by <Moment date={question.answerBy} seconds />.
      </p>
    );
  }
  if (state.kind === 'called') {
    return (
      <div class="notice" data-answer="called">
        <p>
          {state.by ?? 'Someone'} tapped Call the gate at <Moment date={state.at} seconds />.
        </p>
        {question.gateNumber ? (
          <p>
            Call did not go through? <a href={`tel:${question.gateNumber}`}>Call the gate again</a>
          </p>
        ) : null}
      </div>
    );
  }
  return <p class="notice">Nobody tapped Call the gate in time: the gate stayed shut.</p>;
}
