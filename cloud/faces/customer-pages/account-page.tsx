import type { VNode } from 'preact';
import { describedBy, ErrorSummary, FieldError } from '../../foundation/web/field-errors.js';
import { Carried, TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, Layout, type PageContext } from '../../foundation/web/page.js';
import { ZoneOptions } from '../../foundation/web/zone-options.js';
import { type Account, MAX_DISPLAY_NAME_LENGTH } from '../../rules/customers/accounts.js';
import type { Passkey } from '../../rules/passkeys/passkeys.js';
import type { PushSubscription } from '../../rules/push-subscriptions/subscriptions.js';
import { MAX_EMAIL_LENGTH } from '../../rules/sign-in-codes/email-address.js';
import { NOTIFICATION_SCRIPT, NotificationCard } from './notification-card.js';
import { PASSKEY_SCRIPTS, PasskeyButton, PasskeyNotes } from './passkey-button.js';
import { PasskeyList } from './passkey-list.js';

/**
 * `/account` (docs/design.md section 10.2): the customer's name, e-mail address and whether it is confirmed,
 * their passkeys, notifications on their devices (docs/design.md section 10.6), the zone their times are shown in, and signing out. Every change is a form of its own that works without script; adding a
 * passkey needs script by nature.
 */
export interface AccountPageProps {
  page: PageContext;
  account: Account;
  passkeys: readonly Passkey[];
  /** The account's browsers with notifications on, and the key a new subscription is made with (section 10.6). */
  notifications: { devices: readonly PushSubscription[]; vapidPublicKey: string };
  notice?: string | undefined;
  /**
   * By field: `display_name`, `email`, `time_zone`, `passkey-<id>` for a passkey's name or removal, or
   * `notification-<id>` for a browser's name.
   */
  errors?: FieldErrors;
  values?: { display_name?: string; email?: string };
}

export function AccountPage(props: AccountPageProps): VNode {
  return (
    <Layout title="Your account" page={props.page} scripts={[...PASSKEY_SCRIPTS, NOTIFICATION_SCRIPT]}>
      {props.notice ? (
        <p class="notice ok" role="status">
          {props.notice}
        </p>
      ) : null}
      <ErrorSummary errors={props.errors} />
      <section class="card">
        <h1>Your account</h1>
        <NameForm {...props} />
      </section>
      <section class="card" aria-labelledby="passkeys-title">
        <h2 id="passkeys-title">Passkeys</h2>
        <p class="muted">
          A passkey signs you in with your fingerprint, face or screen lock. Add one per device.
        </p>
        <PasskeyList
          page={props.page}
          passkeys={props.passkeys}
          emailConfirmed={!!props.account.emailVerifiedAt}
          errors={props.errors}
        />
        <p class="actions">
          <PasskeyButton
            ceremony="add"
            label="Add a passkey"
            start="/account/passkeys/options"
            finish="/account/passkeys/verify"
            statusId="add-passkey-status"
          />
        </p>
        <PasskeyNotes statusId="add-passkey-status" otherwise="Add one from a browser that can." />
      </section>
      <NotificationCard
        page={props.page}
        devices={props.notifications.devices}
        vapidPublicKey={props.notifications.vapidPublicKey}
        errors={props.errors}
      />
      <EmailSection {...props} />
      <TimeZoneSection {...props} />
      <section class="card" aria-labelledby="companies-title">
        <h2 id="companies-title">Companies</h2>
        <p>
          Act for a company that opens gates through Gatelink: <a href="/company">your companies</a>, or{' '}
          <a href="/company/new">register one</a>.
        </p>
      </section>
      <section class="card" aria-labelledby="signout-title">
        <h2 id="signout-title">Sign out</h2>
        <form method="post" action="/signout" class="actions">
          <CsrfField page={props.page} />
          <button type="submit" class="secondary">
            Sign out on this device
          </button>
        </form>
      </section>
    </Layout>
  );
}

function NameForm(props: AccountPageProps): VNode {
  return (
    <form method="post" action="/account/name" novalidate>
      <CsrfField page={props.page} />
      <TextField
        id="display_name"
        name="display_name"
        label="Your name"
        autocomplete="name"
        maxLength={MAX_DISPLAY_NAME_LENGTH}
        value={props.values?.display_name ?? props.account.displayName}
        errors={props.errors}
      />
      <p class="actions">
        <button type="submit" class="secondary">
          Save name
        </button>
      </p>
    </form>
  );
}

function EmailSection(props: AccountPageProps): VNode {
  const { email, emailVerifiedAt } = props.account;
  return (
    <section class="card" aria-labelledby="email-title">
      <h2 id="email-title">E-mail address</h2>
      {email ? (
        <p class="email-line">
          <strong class="address">{email}</strong>
          {emailVerifiedAt ? (
            <span class="badge ok">Confirmed</span>
          ) : (
            <span class="badge wait">Not confirmed</span>
          )}
        </p>
      ) : (
        <p>No e-mail address yet. With one, you can sign in with a code on a device that has no passkey.</p>
      )}
      {email && !emailVerifiedAt ? (
        <form method="post" action="/account/email">
          <CsrfField page={props.page} />
          <Carried fields={{ email }} />
          <p class="hint">
            Confirm it to sign in with a code, and to keep a way in if you lose your passkeys.
          </p>
          <p class="actions">
            <button type="submit">Send a code to confirm it</button>
          </p>
        </form>
      ) : null}
      {email ? (
        <details open={!!props.errors?.email}>
          <summary>Use another e-mail address</summary>
          <EmailForm {...props} label="Another e-mail address" />
        </details>
      ) : (
        <EmailForm {...props} label="Add an e-mail address" />
      )}
    </section>
  );
}

/**
 * The zone the account's times are shown in (docs/design.md section 10.1), a plain form with every zone this
 * runtime knows. Until one is chosen, times are in UTC, unless the pages' script proposed the browser's zone.
 */
function TimeZoneSection(props: AccountPageProps): VNode {
  const chosen = props.account.timeZone;
  return (
    <section class="card" aria-labelledby="time-zone-title">
      <h2 id="time-zone-title">Time zone</h2>
      <form method="post" action="/account/time-zone">
        <CsrfField page={props.page} />
        <label for="time_zone">The time zone your times are shown in</label>
        <p class="hint" id="time_zone-hint">
          {chosen ? `Now ${chosen}.` : 'None chosen yet, so times are shown in UTC.'} The journal's export
          also keeps every time in UTC.
        </p>
        <FieldError errors={props.errors} field="time_zone" />
        <select
          id="time_zone"
          name="time_zone"
          aria-describedby={describedBy('time_zone', props.errors)}
          aria-invalid={props.errors?.time_zone ? 'true' : undefined}
        >
          <ZoneOptions chosen={chosen ?? 'UTC'} />
        </select>
        <p class="actions">
          <button type="submit" class="secondary">
            Save time zone
          </button>
        </p>
      </form>
    </section>
  );
}

/** A new address for the account: a code goes to it, and it is saved once the code is entered. */
function EmailForm(props: AccountPageProps & { label: string }): VNode {
  return (
    <form method="post" action="/account/email" novalidate>
      <CsrfField page={props.page} />
      <TextField
        id="email"
        name="email"
        type="email"
        label={props.label}
        hint="We send a code to it; it is saved once you enter the code."
        autocomplete="email"
        maxLength={MAX_EMAIL_LENGTH}
        spellcheck={false}
        value={props.values?.email}
        errors={props.errors}
      />
      <p class="actions">
        <button type="submit" class="secondary">
          Send a code
        </button>
      </p>
    </form>
  );
}
