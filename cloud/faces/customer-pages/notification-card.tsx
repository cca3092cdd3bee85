import type { VNode } from 'preact';
import { TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import {
  MAX_SUBSCRIPTION_NAME_LENGTH,
  type PushSubscription,
} from '../../rules/push-subscriptions/subscriptions.js';

/**
 * "Notifications on this device" on `/account` (docs/design.md section 10.6): why first, then a button that
 * asks the browser's permission only when pressed (cloud/foundation/web/assets/push.js shows it where the
 * browser can push; without script, or without PushManager, the card says the browser cannot), and the
 * account's browsers with notifications on, each with a form to rename it (folded away) and one to remove it.
 */
export const NOTIFICATION_SCRIPT = '/assets/push.js';
export const NOTIFICATIONS_PATH = '/account/notifications';

export function NotificationCard(props: {
  page: PageContext;
  devices: readonly PushSubscription[];
  vapidPublicKey: string;
  errors?: FieldErrors | undefined;
}): VNode {
  return (
    <section
      class="card"
      aria-labelledby="notifications-title"
      data-push-card
      data-vapid-key={props.vapidPublicKey}
      data-subscribe={NOTIFICATIONS_PATH}
      data-status="push-status"
    >
      <h2 id="notifications-title">Notifications on this device</h2>
      <p>
        Be told on this phone when your gate is opened or a company is refused. Each barrier's page chooses
        what you are told of it, under “Tell me”: every opening, only refused attempts or nothing, by e-mail
        too, and quiet hours.
      </p>
      <p class="actions">
        <button type="button" hidden data-push-subscribe>
          Turn on notifications
        </button>
      </p>
      <p class="hint" hidden data-push-unsupported>
        This browser cannot show notifications from Gatelink. The journal of each barrier still lists every
        opening.
      </p>
      <p class="hint" hidden data-push-blocked>
        Notifications are blocked for this site in this browser's settings: allow them there, then come back.
      </p>
      <noscript>
        <p class="hint">
          This browser cannot turn notifications on while JavaScript is off. The journal of each barrier still
          lists every opening.
        </p>
      </noscript>
      <p class="passkey-status" id="push-status" role="status" aria-live="polite" />
      <DeviceList {...props} />
    </section>
  );
}

function DeviceList(props: {
  page: PageContext;
  devices: readonly PushSubscription[];
  errors?: FieldErrors | undefined;
}): VNode {
  if (props.devices.length === 0) {
    return <p class="muted">No browser of yours has notifications on yet.</p>;
  }
  return (
    <>
      <h3>Browsers with notifications on</h3>
      <ul class="list passkeys">
        {props.devices.map((device) => (
          <DeviceItem key={device.id} page={props.page} device={device} errors={props.errors} />
        ))}
      </ul>
    </>
  );
}

function DeviceItem(props: {
  page: PageContext;
  device: PushSubscription;
  errors: FieldErrors | undefined;
}): VNode {
  const { device } = props;
  const fieldId = `notification-${device.id}`;
  return (
    <li>
      <div class="passkey-name">{device.name}</div>
      <p class="muted small">
        On since <Moment date={device.createdAt} />
        {device.lastDeliveredAt ? (
          <>
            , last told <Moment date={device.lastDeliveredAt} />.
          </>
        ) : (
          ', nothing sent yet.'
        )}
      </p>
      <div class="passkey-actions">
        <details open={!!props.errors?.[fieldId]}>
          <summary>Rename</summary>
          <form method="post" action={`${NOTIFICATIONS_PATH}/${device.id}/name`} novalidate>
            <CsrfField page={props.page} />
            <TextField
              id={fieldId}
              name="name"
              label="New name for this browser"
              hint="Such as the device it is on: “Anna's phone”."
              maxLength={MAX_SUBSCRIPTION_NAME_LENGTH}
              value={device.name}
              errors={props.errors}
            />
            <p class="actions">
              <button type="submit" class="secondary">
                Save name
              </button>
            </p>
          </form>
        </details>
        <form
          method="post"
          action={`${NOTIFICATIONS_PATH}/${device.id}/remove`}
          data-confirm={`Turn notifications off for “${device.name}”?`}
        >
          <CsrfField page={props.page} />
          <button type="submit" class="danger">
            Remove<span class="visually-hidden"> {device.name}</span>
          </button>
        </form>
      </div>
    </li>
  );
}
