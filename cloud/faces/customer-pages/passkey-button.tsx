import type { VNode } from 'preact';

/**
 * A passkey button and what is said around it (docs/design.md section 10.2). Passkeys need script by nature:
 * the button is hidden until cloud/foundation/web/assets/passkey.js finds that the browser can use passkeys, and a note
 * says so, and what to do instead, where it cannot or script is off. The script's progress and errors are read
 * out from the status region.
 */
export const PASSKEY_SCRIPTS = ['/assets/vendor/simplewebauthn/index.umd.min.js', '/assets/passkey.js'];

export type PasskeyCeremony = 'sign-in' | 'sign-up' | 'add';

/** A `type="button"`: never a form's default button, so Enter in a field keeps to the way without script. */
export function PasskeyButton(props: {
  ceremony: PasskeyCeremony;
  label: string;
  start: string;
  finish: string;
  statusId: string;
  next?: string;
}): VNode {
  return (
    <button
      type="button"
      hidden
      data-passkey={props.ceremony}
      data-start={props.start}
      data-finish={props.finish}
      data-status={props.statusId}
      data-next={props.next}
    >
      {props.label}
    </button>
  );
}

/** The notes for a browser that cannot use passkeys here, and the status region the script writes to. */
export function PasskeyNotes(props: { statusId: string; otherwise: string }): VNode {
  return (
    <>
      <p class="hint" hidden data-passkey-unsupported>
        This browser cannot use passkeys. {props.otherwise}
      </p>
      <noscript>
        <p class="hint">Passkeys need JavaScript, which is off in this browser. {props.otherwise}</p>
      </noscript>
      <p class="passkey-status" id={props.statusId} role="status" aria-live="polite" />
    </>
  );
}
