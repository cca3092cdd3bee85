import type { VNode } from 'preact';
import { ErrorSummary } from '../../foundation/web/field-errors.js';
import { TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import type { CustomerBarrier } from '../../rules/devices/customer-barriers.js';

/** The replacement form as typed: the new controller's pairing code. */
export interface ReplaceForm {
  code: string;
  errors?: FieldErrors;
}

/**
 * The end of a barrier's page (docs/design.md sections 9.1 and 10.4): replacing a broken controller by a new
 * one, which keeps the barrier's name, companies and journal, and removing the barrier from the account.
 */
export function BarrierLifecycleForms(props: {
  page: PageContext;
  barrier: CustomerBarrier;
  replace: ReplaceForm;
}): VNode {
  const { barrier, replace } = props;
  return (
    <>
      <section class="card" aria-labelledby="replace-title">
        <h2 id="replace-title">Replace the controller</h2>
        <p>
          If its controller is broken, your installer fits a new one. Enter the new controller’s pairing code:
          the barrier keeps its name, its journal and the companies’ access to what the new controller also
          has.
        </p>
        <ErrorSummary errors={replace.errors} />
        <form
          method="post"
          action={`/barriers/${barrier.id}/replace`}
          data-confirm={`Move ${barrier.name} to the new controller? The old one stops working for good.`}
          novalidate
        >
          <CsrfField page={props.page} />
          <TextField
            id="new_code"
            name="new_code"
            label="The new controller’s pairing code"
            hint="8 letters and digits, such as ABCD-1234."
            value={replace.code}
            errors={replace.errors}
            autocomplete="off"
            spellcheck={false}
            autocapitalize="characters"
            maxLength={20}
          />
          <p class="actions">
            <button type="submit" class="secondary">
              Replace the controller
            </button>
          </p>
        </form>
      </section>
      <section class="card" aria-labelledby="remove-title">
        <h2 id="remove-title">Remove this barrier</h2>
        <p>
          Every company’s access to it ends at once, and the barrier leaves your account with its journal. Its
          controller can then be added by its next owner.
        </p>
        <form
          method="post"
          action={`/barriers/${barrier.id}/remove`}
          data-confirm={`Remove ${barrier.name} from your account? Every company’s access to it ends.`}
          class="actions"
        >
          <CsrfField page={props.page} />
          <button type="submit" class="danger">
            Remove this barrier from your account
          </button>
        </form>
      </section>
    </>
  );
}

/** Said on the barriers page after a removal: what happened and how the next owner adds the controller. */
export function RemovedNotice(props: { revokedKeys: number }): VNode {
  const { revokedKeys } = props;
  return (
    <div class="notice ok" role="status">
      <p>
        Barrier removed from your account.{' '}
        {revokedKeys === 0
          ? 'No company had access to it.'
          : `Access withdrawn for ${revokedKeys === 1 ? 'one company key' : `${revokedKeys} company keys`}.`}
      </p>
      <p>
        To hand it over, the next owner adds it under “Add a barrier” with the controller’s pairing code,
        which your installer shows on the controller with <code>gatelink-device pairing-code</code>. They will
        see none of your journal.
      </p>
    </div>
  );
}
