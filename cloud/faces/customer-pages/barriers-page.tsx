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
 * online, how many companies may open it and, first thing on its line, a gate left open past its limit; those
 * shared with them (section 9.2) with whose they are; and the form that adds one with its controller's pairing
 * code.
 */
export interface PairingForm {
  code: string;
  name: string;
  /** Where to go once the barrier is added (a request page waiting for it), or ''. */
  next: string;
  errors?: FieldErrors;
}

/**
 * What the last form did: a barrier added (named by its id), one removed with how many keys it ended, or a
 * shared one left.
 */
export type BarriersNotice =
  | { kind: 'added'; barrierId: string }
  | { kind: 'removed'; revokedKeys: number }
  | { kind: 'left' };

export function BarriersPage(props: {
  page: PageContext;
  barriers: { barrier: CustomerBarrier; companies: number; leftOpen: SensedObject[] }[];
  form: PairingForm;
  notice?: BarriersNotice | undefined;
}): VNode {
  const { barriers, form, notice } = props;
  const added =
    notice?.kind === 'added' ? barriers.find(({ barrier }) => barrier.id === notice.barrierId) : undefined;
  return (
    <Layout title="Your barriers" page={props.page}>
      {notice?.kind === 'removed' ? <RemovedNotice revokedKeys={notice.revokedKeys} /> : null}
      {added ? <AddedNotice barrier={added.barrier} /> : null}
      {notice?.kind === 'left' ? (
        <div class="notice ok" role="status">
          You left the barrier: it is no longer on your list, and you no longer see its journal or its
          companies.
        </div>
      ) : null}
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
                  <SharedLine barrier={barrier} />
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
          {/* The browser's own time zone, filled in by app.js: the barrier's, until its owner says otherwise. */}
          <input type="hidden" name="time_zone" value="" data-browser-zone />
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
            hint="What you call it, such as Home, Mill Lane 4 or Holiday flat. You can change it later."
            value={form.name}
            errors={form.errors}
            maxLength={BARRIER_NAME_MAX}
          />
          <p class="actions">
            <button type="submit">Add barrier</button>
          </p>
        </form>
      </section>
      <section class="card" aria-labelledby="phone-title">
        <h2 id="phone-title">A gate that opens on a call</h2>
        <p>
          Does your gate open when your phone calls it? Your Android phone can place that call for the
          companies you let in.
        </p>
        <p>
          <a href="/barriers/phone">Add a gate that opens on a call from my phone</a>
        </p>
      </section>
    </Layout>
  );
}

/**
 * Said on the list just after a barrier was added, naming it (the name looked up by its id, never carried in
 * the address), with the way on to its page.
 */
function AddedNotice(props: { barrier: CustomerBarrier }): VNode {
  const { barrier } = props;
  return (
    <div class="notice ok" role="status">
      <p>{barrier.name} added. Companies you grant access to can now open it.</p>
      <p>
        <a href={`/barriers/${barrier.id}`}>Go to {barrier.name}</a> to see what it opens and whether its
        controller is online.
      </p>
    </div>
  );
}

/** A barrier shared with the reader: whose it is, and, for one who may only look, that they may not grant. */
function SharedLine(props: { barrier: CustomerBarrier }): VNode | null {
  const { barrier } = props;
  if (barrier.sharedBy === null) return null;
  return (
    <div class="muted small">
      Shared by {barrier.sharedBy}
      {barrier.role === 'looker' ? '. You can look, not grant.' : ''}
    </div>
  );
}

export function companiesText(count: number): string {
  if (count === 0) return 'No company has access';
  return count === 1 ? '1 company has access' : `${count} companies have access`;
}

/** "Main gate left open since 27 Nov 2026, 15:02 (Europe/Berlin)": in words and marked, not by colour alone. */
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
