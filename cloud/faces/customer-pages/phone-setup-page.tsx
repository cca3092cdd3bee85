import type { VNode } from 'preact';
import { CsrfField, Layout, type PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import { ShownOnce } from '../../foundation/web/shown-once.js';

/**
 * `/barriers/phone` (docs/design.md section 9.3): a gate that opens on a call from the customer's own phone. The
 * page says what the phone needs, and on asking gives the one command to paste into Termux, with the set-up
 * code in it: shown once, on the answer to the form, never in an address.
 */
export interface PhoneSetupShown {
  command: string;
  expiresAt: Date;
}

export function PhoneSetupPage(props: { page: PageContext; shown?: PhoneSetupShown | undefined }): VNode {
  const { shown } = props;
  return (
    <Layout title="A gate that opens on a call from your phone" page={props.page}>
      <h1>A gate that opens on a call from your phone</h1>
      <p>
        Some gates open when a number they know calls them. Your Android phone can place that call for you, so
        that companies you let in open the gate, and every call is in your journal.
      </p>
      {shown ? <SetupCommand shown={shown} /> : <AskForm page={props.page} />}
      <section class="card" aria-labelledby="needs-title">
        <h2 id="needs-title">What your phone needs</h2>
        <ol class="steps">
          <li>
            Termux, Termux:API and Termux:Boot, from F-Droid (the versions in Google Play are too old to work
            together).
          </li>
          <li>Your gate knows this phone's number: it lets in the numbers on its list.</li>
          <li>
            Allow Termux:API to make phone calls when Android asks, at the first call. Without it the call
            cannot be placed.
          </li>
          <li>
            Battery optimisation off for Termux (Settings, Apps, Termux, Battery: Unrestricted), so that
            Android does not stop it in the night.
          </li>
          <li>Open Termux:Boot once, so that the phone starts calling again after it restarts.</li>
        </ol>
        <p class="muted small">
          The phone checks each of these when it starts and says in one line what is missing. Your barrier's
          page shows when the phone was last online: companies can only open while it is.
        </p>
      </section>
      <p>
        <a href="/barriers">Back to your barriers</a>
      </p>
    </Layout>
  );
}

function AskForm(props: { page: PageContext }): VNode {
  return (
    <section class="card" aria-labelledby="ask-title">
      <h2 id="ask-title">Set up your phone</h2>
      <p>
        You get one command to paste into Termux on the phone. It installs Gatelink there, asks for your
        gate's number and a name, and adds the gate to your barriers.
      </p>
      <form method="post" action="/barriers/phone">
        <CsrfField page={props.page} />
        {/* The browser's own time zone, filled in by app.js: the barrier's, until its owner says otherwise. */}
        <input type="hidden" name="time_zone" value="" data-browser-zone />
        <p class="actions">
          <button type="submit">Show my set-up command</button>
        </p>
      </form>
    </section>
  );
}

function SetupCommand(props: { shown: PhoneSetupShown }): VNode {
  const { shown } = props;
  return (
    <ShownOnce
      id="phone-command"
      title="Your set-up command"
      label="Paste this into Termux"
      rows={4}
      secret={shown.command}
    >
      <p>
        It works once, until <Moment date={shown.expiresAt} />, and only for your account: a phone set up with
        it can only ever be yours. Asking for a new command ends this one.
      </p>
      <p>
        Once the phone is set up, the gate is on <a href="/barriers">your barriers</a>.
      </p>
    </ShownOnce>
  );
}
