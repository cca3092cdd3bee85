import type { VNode } from 'preact';
import { ErrorSummary } from '../../foundation/web/field-errors.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, Layout, type PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { CompanyDisplay } from '../../rules/companies/display.js';
import type { Companion } from '../../rules/households/companions.js';
import type { RequestView } from '../../rules/requests/request-view.js';
import { CompanyMark } from './company-mark.js';
import { type ConsentChoices, ConsentForm, GrantedAccess } from './consent-page.js';
import { HandoverForm, PassedOn, PassedToYou } from './handover-form.js';

/**
 * `/c/<code>` (docs/design.md section 10.3): the company as the customer must recognise it, the request's
 * state in words, and the way on. Reading it never changes anything, since messengers fetch links to preview
 * them: a signed-in customer takes a new request with the Continue button, a POST, and lets it go again with
 * Release.
 */
export interface RequestPageProps {
  page: PageContext;
  view: RequestView;
  /** For the customer who holds a claimed request: the consent form's barriers and what was chosen. */
  consent?: ConsentChoices;
  /** For the customer who granted: the key, shown as the confirmation. */
  granted?: Parameters<typeof GrantedAccess>[0]['granted'];
  justGranted?: boolean;
  /** Right after this customer released the request: it is `new` again, and the page says so. */
  justReleased?: boolean;
  /** For the holder of a claimed request: whom they may pass it to (docs/design.md section 9.2). */
  handover?: { companions: readonly Companion[]; errors?: FieldErrors };
  /** The name of whoever passed this claimed request to its holder, reading it. */
  handedBy?: string;
  /** For whoever passed the claimed request on: the name of its holder now. */
  passedTo?: string;
}

export function RequestPage(props: RequestPageProps): VNode {
  const { view, page } = props;
  if (view.kind !== 'found') return <CodeNotFound page={page} view={view} />;
  const signedIn = page.customer !== null;
  const { company, state, holder, code } = view;
  const passedOn = state === 'claimed' && holder !== 'you' && props.passedTo !== undefined;
  const stateWords =
    state === 'issued' && props.justGranted
      ? 'Granted'
      : passedOn
        ? 'Passed on'
        : STATE_WORDS[state === 'claimed' && holder !== 'you' ? 'taken' : state];
  const title = `${company.name}: ${stateWords}`;
  return (
    <Layout title={title} page={page}>
      <ErrorSummary errors={{ ...props.consent?.errors, ...props.handover?.errors }} />
      {props.handedBy && state === 'claimed' && holder === 'you' ? <PassedToYou by={props.handedBy} /> : null}
      {props.justReleased ? (
        <div class="notice ok" role="status">
          You released this request: it waits again for whoever answers it. To answer with another account,
          sign out, sign in with that one and open this link again.
        </div>
      ) : null}
      <section class="card" aria-labelledby="request-title">
        <h1 id="request-title">{heading(company, state, holder)}</h1>
        <CompanyMark company={company} />
        <p class="state">
          <span class={`badge ${BADGE[state]}`}>{stateWords}</span>
        </p>
        <StateExplained {...props} company={company} signedIn={signedIn} code={code} />
      </section>
      {state === 'claimed' && holder === 'you' && props.consent ? (
        <ConsentForm page={page} code={code} company={company} choices={props.consent} />
      ) : null}
      {state === 'claimed' && holder === 'you' && props.handover ? (
        <HandoverForm
          page={page}
          code={code}
          companions={props.handover.companions}
          errors={props.handover.errors}
        />
      ) : null}
      {(state === 'issued' || state === 'revoked') && holder === 'you' && props.granted ? (
        <GrantedAccess company={company} granted={props.granted} justGranted={props.justGranted === true} />
      ) : null}
    </Layout>
  );
}

const STATE_WORDS = {
  new: 'Waiting for you',
  claimed: 'Waiting for your answer',
  taken: 'Taken by another account',
  issued: 'Already granted',
  revoked: 'Withdrawn',
  expired: 'Expired',
  declined: 'Declined',
} as const;

const BADGE = {
  new: 'wait',
  claimed: 'wait',
  issued: 'ok',
  revoked: 'bad',
  expired: 'bad',
  declined: 'bad',
} as const;

function heading(company: CompanyDisplay, state: string, holder: string): string {
  if (state === 'new' || (state === 'claimed' && holder === 'you')) {
    return `${company.name} asks to open your gate`;
  }
  return `A request from ${company.name}`;
}

function StateExplained(
  props: RequestPageProps & { company: CompanyDisplay; signedIn: boolean; code: string },
): VNode | null {
  const { view, company, signedIn, code } = props;
  if (view.kind !== 'found') return null;
  const next = `/c/${code}`;
  switch (view.state) {
    case 'new':
      return signedIn ? (
        <>
          <p>
            You choose which barrier and what on it {company.name} may open, and for how long. Nothing is
            shared until you grant access, and you can withdraw it at any moment.
          </p>
          <form method="post" action={`/c/${code}/claim`} class="actions">
            <CsrfField page={props.page} />
            <button type="submit">Continue</button>
            <a href="/barriers">Not now</a>
          </form>
        </>
      ) : (
        <>
          <p>
            Sign in to choose which barrier {company.name} may open, and for how long. New to Gatelink? Create
            an account: it takes a minute, and you can withdraw access at any moment.
          </p>
          <SignInLinks next={next} />
        </>
      );
    case 'claimed':
      if (view.holder === 'you') {
        return (
          <p>
            Answer below by <Moment date={view.request.expires_at} />, when the request lapses. If you
            decline, {company.name} learns only that you said no.
          </p>
        );
      }
      if (props.passedTo) return <PassedOn to={props.passedTo} company={company.name} />;
      return signedIn ? (
        <p>
          Another account has already taken this request, and only that account can answer it. If you expected
          to answer it, ask {company.name} for a new code.
        </p>
      ) : (
        <>
          <p>
            Someone has already opened this request. If that was you, sign in with the same account to answer.
          </p>
          <SignInLinks next={next} />
        </>
      );
    case 'issued':
      if (view.holder === 'you' && props.justGranted) {
        // Just granted: the confirmation below says what; this says it is done, not that it was done before.
        return <p>Done. Below is what you gave; you can change it or withdraw it on the barrier's page.</p>;
      }
      return view.holder === 'you' ? (
        <p>You granted this access. There is nothing more to do here.</p>
      ) : (
        <p>Access was already granted on this request. There is nothing more to do here.</p>
      );
    case 'revoked':
      return view.holder === 'you' ? (
        <p>
          You withdrew this access. {company.name} can no longer open your barrier with it; ask them for a new
          code if you want to grant it again.
        </p>
      ) : (
        <p>This access was withdrawn. There is nothing to grant here.</p>
      );
    case 'expired':
      return (
        <p>
          This request lapsed before access was granted, so there is nothing to grant here. If you still want
          to give {company.name} access, ask them for a new code.
        </p>
      );
    case 'declined':
      return view.holder === 'you' && view.request.declined_at ? (
        <p>
          You declined this request on <Moment date={view.request.declined_at} />. {company.name} was told
          that you said no, and nothing about you or your barriers. If you change your mind, ask them for a
          new code.
        </p>
      ) : (
        <p>
          This request was declined, so there is nothing to grant here. If you still want to give{' '}
          {company.name} access, ask them for a new code.
        </p>
      );
  }
}

function SignInLinks(props: { next: string }): VNode {
  return (
    <p class="actions">
      <a class="button" href={`/signin?next=${props.next}`}>
        Sign in
      </a>
      <a class="button secondary" href={`/signup?next=${props.next}`}>
        Create an account
      </a>
    </p>
  );
}

/** A code that cannot be one, or that names no request: say which, and let the person type it again. */
function CodeNotFound(props: { page: PageContext; view: Exclude<RequestView, { kind: 'found' }> }): VNode {
  const mistyped = props.view.kind === 'mistyped';
  const title = mistyped ? 'This is not a request code' : 'No request has this code';
  return (
    <Layout title={title} page={props.page}>
      <section class="card" aria-labelledby="request-title">
        <h1 id="request-title">{title}</h1>
        {mistyped ? (
          <p>
            A request code has 12 letters and digits, such as <code>7KQ2-M9XD-4FTA</code>. Check it against
            the QR code or the link the company sent you.
          </p>
        ) : (
          <p>
            We know no request with the code{' '}
            <code>{props.view.kind === 'unknown' ? props.view.code : ''}</code>. It may be mistyped, or the
            company may have sent a newer one: check it, or ask the company.
          </p>
        )}
        <form method="get" action="/c">
          <label for="code">Request code</label>
          <input
            type="text"
            id="code"
            name="code"
            autocomplete="off"
            autocapitalize="characters"
            spellcheck={false}
            aria-describedby="code-hint"
          />
          <p class="hint" id="code-hint">
            Capitals, hyphens and spaces do not matter, nor O for 0 or I and L for 1.
          </p>
          <p class="actions">
            <button type="submit">Look it up</button>
          </p>
        </form>
      </section>
    </Layout>
  );
}
