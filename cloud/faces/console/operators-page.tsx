import type { VNode } from 'preact';
import { ErrorSummary } from '../../foundation/web/field-errors.js';
import { TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { OperatorAction } from '../../rules/operators/actions.js';
import type { OperatorAccount } from '../../rules/operators/operators.js';
import { MAX_EMAIL_LENGTH } from '../../rules/sign-in-codes/email-address.js';
import { ActionHistory } from './action-history.js';
import type { ConsoleOperator } from './console-access.js';
import { ConsoleFrame } from './console-frame.js';

/**
 * `/console/operators` (docs/design.md section 11.5): the accounts with operator rights. A console signed in
 * with the operator token grants them by confirmed e-mail address and withdraws them; the operator then uses
 * the console signed in with their own account.
 */
export interface OperatorsPageProps {
  page: PageContext;
  operator: ConsoleOperator;
  accounts: OperatorAccount[];
  actions: OperatorAction[];
  notice?: string | undefined;
  email?: string | undefined;
  errors?: FieldErrors | undefined;
}

export function OperatorsPage(props: OperatorsPageProps): VNode {
  const manage = props.operator.viaToken;
  return (
    <ConsoleFrame page={props.page} operator={props.operator} section="operators" title="Operators">
      <h2 class="section-title">Operator accounts</h2>
      {props.notice ? (
        <div class="notice ok" role="status">
          {props.notice}
        </div>
      ) : null}
      <ErrorSummary errors={props.errors} />
      <section class="card" aria-label="Operator accounts">
        {props.accounts.length === 0 ? (
          <p class="muted">No account has operator rights: only the operator token opens the console.</p>
        ) : (
          <ul class="list">
            {props.accounts.map((account) => (
              <li key={account.customerId} class="row">
                <div class="grow">
                  <div>{account.displayName}</div>
                  <div class="muted small">
                    {account.email ?? 'no confirmed address'} · by {account.addedBy},{' '}
                    <Moment date={account.addedAt} />
                  </div>
                </div>
                {manage ? (
                  <form method="post" action={`/console/operators/${account.customerId}/withdraw`}>
                    <CsrfField page={props.page} />
                    <button
                      type="submit"
                      class="danger"
                      aria-label={`Withdraw ${account.displayName}'s rights`}
                    >
                      Withdraw
                    </button>
                  </form>
                ) : null}
              </li>
            ))}
          </ul>
        )}
      </section>
      {manage ? (
        <Grant {...props} />
      ) : (
        <p class="muted">
          Only a console signed in with the operator token grants and withdraws operator rights.
        </p>
      )}
      <ActionHistory actions={props.actions} title="Rights given and withdrawn" empty="None yet." />
    </ConsoleFrame>
  );
}

function Grant(props: OperatorsPageProps): VNode {
  return (
    <section class="card" aria-labelledby="grant-title">
      <h3 id="grant-title">Give operator rights</h3>
      <p class="muted small">
        To a Gatelink account by the e-mail address it has confirmed. That operator then signs in at /signin
        with their own passkey or an e-mail code, and opens /console: no token needed.
      </p>
      <form method="post" action="/console/operators" novalidate>
        <CsrfField page={props.page} />
        <TextField
          id="email"
          name="email"
          label="Their confirmed e-mail address"
          type="email"
          value={props.email}
          errors={props.errors}
          inputMode="email"
          autocomplete="off"
          maxLength={MAX_EMAIL_LENGTH}
        />
        <p class="actions">
          <button type="submit">Give operator rights</button>
        </p>
      </form>
    </section>
  );
}
