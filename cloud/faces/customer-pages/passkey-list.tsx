import type { VNode } from 'preact';
import { TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import { isLastWayIn, MAX_PASSKEY_NAME_LENGTH, type Passkey } from '../../rules/passkeys/passkeys.js';

/**
 * The account's passkeys (docs/design.md section 10.2), each with when it was added and last used, a form to
 * rename it (folded away until wanted) and one to remove it. The last way into an account has no remove
 * button: the page says why, and what would make it removable.
 */
export function PasskeyList(props: {
  page: PageContext;
  passkeys: readonly Passkey[];
  emailConfirmed: boolean;
  errors?: FieldErrors | undefined;
}): VNode {
  if (props.passkeys.length === 0) {
    return <p>You have no passkeys yet: you sign in with a code sent to your e-mail address.</p>;
  }
  const lastWayIn = isLastWayIn(props.passkeys.length, props.emailConfirmed);
  return (
    <ul class="list passkeys">
      {props.passkeys.map((passkey) => (
        <PasskeyItem
          key={passkey.id}
          page={props.page}
          passkey={passkey}
          lastWayIn={lastWayIn}
          errors={props.errors}
        />
      ))}
    </ul>
  );
}

function PasskeyItem(props: {
  page: PageContext;
  passkey: Passkey;
  lastWayIn: boolean;
  errors: FieldErrors | undefined;
}): VNode {
  const { passkey } = props;
  const fieldId = `passkey-${passkey.id}`;
  return (
    <li>
      <div class="passkey-name">{passkey.name}</div>
      <p class="muted small">
        Added <Moment date={passkey.createdAt} />
        {passkey.lastUsedAt ? (
          <>
            , last used <Moment date={passkey.lastUsedAt} />
          </>
        ) : (
          ', not used to sign in yet'
        )}
        {passkey.backedUp ? '. Synced to your other devices by your passkey provider.' : '.'}
      </p>
      <div class="passkey-actions">
        <details open={!!props.errors?.[fieldId]}>
          <summary>Rename</summary>
          <form method="post" action={`/account/passkeys/${passkey.id}/name`} novalidate>
            <CsrfField page={props.page} />
            <TextField
              id={fieldId}
              name="name"
              label="New name for this passkey"
              hint="Such as the device it is on: “Anna's phone”."
              maxLength={MAX_PASSKEY_NAME_LENGTH}
              value={passkey.name}
              errors={props.errors}
            />
            <p class="actions">
              <button type="submit" class="secondary">
                Save name
              </button>
            </p>
          </form>
        </details>
        {props.lastWayIn ? (
          <p class="hint" id={`${fieldId}-remove`}>
            This passkey is your only way to sign in, so it cannot be removed. Add another passkey, or confirm
            an e-mail address, first.
          </p>
        ) : (
          <form
            method="post"
            action={`/account/passkeys/${passkey.id}/remove`}
            data-confirm={`Remove the passkey “${passkey.name}”? It will no longer sign you in.`}
          >
            <CsrfField page={props.page} />
            <button type="submit" class="danger">
              Remove<span class="visually-hidden"> {passkey.name}</span>
            </button>
          </form>
        )}
      </div>
    </li>
  );
}
