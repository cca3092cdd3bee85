import type { VNode } from 'preact';
import { ErrorSummary } from '../../foundation/web/field-errors.js';
import { TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, Layout, type PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import { BARRIER_NAME_MAX, type CustomerBarrier } from '../../rules/devices/customer-barriers.js';
import type { SensedObject } from '../../rules/positions/gate-display.js';
import { RemovedNotice } from './barrier-lifecycle-forms.js';

/**
 * `/barriers` (docs/design.md section 10.4): the customer's barriers, each with whether its controller is
 * online, how many companies may open it and, first thing on its line, a gate left open past its limit; and
 * the form that adds one with its controller's pairing code.
 */
export interface PairingForm {
  code: string;
  name: string;
  /** Where to go once the barrier is added (a request page waiting for it), or ''. */
  next: string;
  errors?: FieldErrors;
}

export function BarriersPage(props: {
  page: PageContext;
  barriers: { barrier: CustomerBarrier; companies: number; leftOpen: SensedObject[] }[];
  form: PairingForm;
  /** Set just after a barrier was removed: how many keys it ended. */
  removed?: { revokedKeys: number } | undefined;
}): VNode {
  const { barriers, form } = props;
  return (
    <Layout title="Your barriers" page={props.page}>
      {props.removed ? <RemovedNotice revokedKeys={props.removed.revokedKeys} /> : null}
      <h1>Your barriers</h1>
      {form.next ? (
        <div class="notice">Add your barrier below; then you go back to the request to answer it.</div>
      ) : null}
      <section class="card" aria-label="Barriers">
        {barriers.length === 0 ? (
          <p>You have no barrier yet. Add one with the pairing code of its controller.</p>
        ) : (
          <ul class="list">
            {barriers.map(({ barrier, companies, leftOpen }) => (
              <li key={barrier.id} class="row">
                <div class="grow">
                  <a class="barrier-link" href={`/barriers/${barrier.id}`}>
                    {barrier.name}
                  </a>
                  {leftOpen.map((object) => (
                    <LeftOpen key={object.numberId} object={object} />
                  ))}
                  <div class="muted small">{companiesText(companies)}</div>
                </div>
                <span class={`badge ${barrier.online ? 'ok' : 'bad'}`}>
                  {barrier.online ? 'Online' : 'Offline'}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section class="card" aria-labelledby="add-title">
        <h2 id="add-title">Add a barrier</h2>
        <ErrorSummary errors={form.errors} />
        <form method="post" action="/barriers" novalidate>
          <CsrfField page={props.page} />
          {form.next ? <input type="hidden" name="next" value={form.next} /> : null}
          <TextField
            id="code"
            name="code"
            label="Pairing code"
            hint="8 letters and digits from the controller or its installer, such as ABCD-1234. It works once, within 24 hours."
            value={form.code}
            errors={form.errors}
            autocomplete="off"
            autocapitalize="characters"
            spellcheck={false}
          />
          <TextField
            id="name"
            name="name"
            label="Name"
            hint="What you call it, such as Front gate. You can change it later."
            value={form.name}
            errors={form.errors}
            maxLength={BARRIER_NAME_MAX}
          />
          <p class="actions">
            <button type="submit">Add barrier</button>
          </p>
        </form>
      </section>
    </Layout>
  );
}

export function companiesText(count: number): string {
  if (count === 0) return 'No company has access';
  return count === 1 ? '1 company has access' : `${count} companies have access`;
}

/** "Main gate left open since 27 Nov 2026, 14:02 UTC": said in words and marked, not by colour alone. */
function LeftOpen(props: { object: SensedObject }): VNode {
  const { object } = props;
  return (
    <p class="gate-alert">
      <strong>{object.label} left open</strong>
      {object.since ? (
        <>
          {' '}
          since <Moment date={object.since} />
        </>
      ) : null}
    </p>
  );
}
