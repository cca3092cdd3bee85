import type { VNode } from 'preact';
import { ErrorSummary } from '../../foundation/web/field-errors.js';
import { TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { CustomerBarrier } from '../../rules/devices/customer-barriers.js';
import type { Household } from '../../rules/households/members.js';

/** The invitation form as typed: the address and whether they may grant. */
export interface InviteForm {
  email: string;
  mayGrant: boolean;
  errors?: FieldErrors;
}

/**
 * "People who share this barrier", on its owner's page (docs/design.md section 9.2): each member with what they
 * may do and when they joined, the invitations still waiting, and the form that invites someone by e-mail.
 */
export function HouseholdCard(props: {
  page: PageContext;
  barrier: CustomerBarrier;
  household: Household;
  invite: InviteForm;
}): VNode {
  const { barrier, household, invite } = props;
  const base = `/barriers/${barrier.id}`;
  return (
    <section class="card" aria-labelledby="household-title">
      <h2 id="household-title">People who share this barrier</h2>
      {household.members.length === 0 ? (
        <p>Nobody else shares {barrier.name}. Invite the people you live with, so they see it too.</p>
      ) : (
        <ul class="list">
          {household.members.map((member) => (
            <li key={member.customerId} class="member">
              <div>
                <strong>{member.name}</strong>{' '}
                {member.email ? <span class="muted">{member.email}</span> : null}
              </div>
              <div class="small">
                {member.mayGrant ? 'May grant access' : 'Can look only'}. Joined{' '}
                <Moment date={member.joinedAt} />.
              </div>
              <div class="actions">
                <form method="post" action={`${base}/members/${member.customerId}/may-grant`}>
                  <CsrfField page={props.page} />
                  <input type="hidden" name="may_grant" value={member.mayGrant ? '0' : '1'} />
                  <button type="submit" class="secondary">
                    {member.mayGrant ? 'Let them look only' : 'Let them grant and withdraw access'}
                    <span class="visually-hidden"> ({member.name})</span>
                  </button>
                </form>
                <form
                  method="post"
                  action={`${base}/members/${member.customerId}/remove`}
                  data-confirm={`Remove ${member.name}? They no longer see ${barrier.name}.`}
                >
                  <CsrfField page={props.page} />
                  <button type="submit" class="danger" aria-label={`Remove ${member.name}`}>
                    Remove
                  </button>
                </form>
              </div>
            </li>
          ))}
        </ul>
      )}
      {household.invitations.length === 0 ? null : (
        <>
          <h3>Invitations waiting</h3>
          <ul class="list">
            {household.invitations.map((invitation) => (
              <li key={invitation.id}>
                <div>
                  {invitation.email}{' '}
                  <span class="muted small">
                    ({invitation.mayGrant ? 'may grant access' : 'can look only'}; sent{' '}
                    <Moment date={invitation.createdAt} />, valid until <Moment date={invitation.expiresAt} />
                    )
                  </span>
                </div>
                <form method="post" action={`${base}/invitations/${invitation.id}/withdraw`} class="actions">
                  <CsrfField page={props.page} />
                  <button
                    type="submit"
                    class="secondary"
                    aria-label={`Withdraw invitation to ${invitation.email}`}
                  >
                    Withdraw invitation
                  </button>
                </form>
              </li>
            ))}
          </ul>
        </>
      )}
      <h3>Invite someone</h3>
      <ErrorSummary errors={invite.errors} />
      <form method="post" action={`${base}/members`} novalidate>
        <CsrfField page={props.page} />
        <TextField
          id="email"
          name="email"
          type="email"
          label="E-mail address"
          hint="We e-mail them a link; they accept it signed in with this address. It works once, for 7 days."
          value={invite.email}
          errors={invite.errors}
          autocomplete="off"
          inputMode="email"
          spellcheck={false}
        />
        <label class="choice">
          <input type="checkbox" name="may_grant" value="1" checked={invite.mayGrant} />
          <span>May grant and withdraw access</span>
        </label>
        <p class="actions">
          <button type="submit" class="secondary">
            Send invitation
          </button>
        </p>
      </form>
    </section>
  );
}

/** On a barrier shared with the reader: whose it is, what they may do, and the way out. */
export function SharedWithYouCard(props: { page: PageContext; barrier: CustomerBarrier }): VNode {
  const { barrier } = props;
  return (
    <section class="card" aria-labelledby="shared-title">
      <h2 id="shared-title">Shared with you</h2>
      <p>
        {barrier.sharedBy} shares {barrier.name} with you.{' '}
        {barrier.role === 'granter'
          ? 'You may give and withdraw companies’ access.'
          : 'You can look, not grant: you see who may open it and when it was opened.'}
      </p>
      <form
        method="post"
        action={`/barriers/${barrier.id}/leave`}
        data-confirm={`Leave ${barrier.name}? You no longer see it.`}
        class="actions"
      >
        <CsrfField page={props.page} />
        <button type="submit" class="danger">
          Leave this barrier
        </button>
      </form>
    </section>
  );
}
