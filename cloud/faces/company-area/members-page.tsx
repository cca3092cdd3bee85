import type { VNode } from 'preact';
import type { MemberRole } from '../../foundation/db/schema.js';
import { TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, type PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import type { Company } from '../../rules/companies/companies.js';
import { MAX_MEMBERS, type Member } from '../../rules/companies/members.js';
import { MAX_EMAIL_LENGTH } from '../../rules/sign-in-codes/email-address.js';
import { CompanyFrame, companyPath } from './company-frame.js';
import { ROLE_WORDS } from './role-words.js';

/**
 * `/company/<id>/members` (docs/design.md section 11.1): who acts for the company and in which role; the owner
 * adds people by e-mail address as developers or viewers, changes their roles, removes them, and hands the
 * company to another. Each member signs in to their own account, with their own passkeys.
 */

export interface MembersPageProps {
  page: PageContext;
  company: Company;
  role: MemberRole;
  /** The visitor's own membership, so that the list can say "you". */
  memberId: number;
  members: Member[];
  notice?: string | undefined;
  email?: string;
  errors?: FieldErrors;
}

export function MembersPage(props: MembersPageProps): VNode {
  const owner = props.role === 'owner';
  return (
    <CompanyFrame
      page={props.page}
      company={props.company}
      section="members"
      title="Members"
      notice={props.notice}
      errors={props.errors}
    >
      <section class="card" aria-label="Members">
        <ul class="list">
          {props.members.map((member) => (
            <li key={member.id} class="row">
              <div class="grow">
                <div>
                  {member.displayName ?? member.email}
                  {member.id === props.memberId ? ' (you)' : ''}
                </div>
                <div class="muted small">
                  {ROLE_WORDS[member.role].name}
                  {member.displayName && member.email ? ` · ${member.email}` : ''}
                  {member.customerId === null ? ' · has not signed in yet' : ''} · added{' '}
                  <Moment date={member.addedAt} />
                </div>
              </div>
              {owner && member.role !== 'owner' ? <MemberActions {...props} member={member} /> : null}
            </li>
          ))}
        </ul>
      </section>
      {owner ? (
        <AddMember {...props} />
      ) : props.role === 'member' ? (
        <p class="muted">
          You are a developer: you may {ROLE_WORDS.member.may}. The company's owner adds and removes members
          and gives their roles.
        </p>
      ) : null}
    </CompanyFrame>
  );
}

/** What the owner may do to another member: give the other role, hand over the company, remove them. */
function MemberActions(props: MembersPageProps & { member: Member }): VNode {
  const { member } = props;
  const path = `${companyPath(props.company, 'members')}/${member.id}`;
  const name = member.displayName ?? member.email ?? 'member';
  const other = member.role === 'viewer' ? 'member' : 'viewer';
  return (
    <div class="actions">
      <form method="post" action={`${path}/role`}>
        <CsrfField page={props.page} />
        <input type="hidden" name="role" value={other} />
        <button
          type="submit"
          class="secondary"
          aria-label={`Make ${ROLE_WORDS[other].name.toLowerCase()}: ${name}`}
        >
          Make {ROLE_WORDS[other].name.toLowerCase()}
        </button>
      </form>
      {member.customerId !== null ? (
        <form
          method="post"
          action={`${path}/owner`}
          data-confirm={`Hand ${props.company.name} to ${name}? They become its owner and you a developer; only they can give it back.`}
        >
          <CsrfField page={props.page} />
          <button type="submit" class="secondary" aria-label={`Make owner: ${name}`}>
            Make owner
          </button>
        </form>
      ) : null}
      <form method="post" action={`${path}/remove`}>
        <CsrfField page={props.page} />
        <button type="submit" class="danger" aria-label={`Remove ${name}`}>
          Remove
        </button>
      </form>
    </div>
  );
}

function AddMember(props: MembersPageProps): VNode {
  return (
    <section class="card" aria-labelledby="add-member-title">
      <h3 id="add-member-title">Add a member</h3>
      <p class="muted small">
        They become a member when they sign in to Gatelink with this address confirmed; we e-mail them to say
        so. A company has at most {MAX_MEMBERS} members.
      </p>
      <form method="post" action={companyPath(props.company, 'members')} novalidate>
        <CsrfField page={props.page} />
        <TextField
          id="email"
          name="email"
          label="Their e-mail address"
          type="email"
          value={props.email}
          errors={props.errors}
          inputMode="email"
          autocomplete="off"
          maxLength={MAX_EMAIL_LENGTH}
        />
        <fieldset>
          <legend>Their role</legend>
          {(['member', 'viewer'] as const).map((role) => (
            <label key={role} class="choice">
              <input type="radio" name="role" value={role} checked={role === 'member'} />
              {/* One span, so that the words wrap as a sentence beside the radio rather than in columns. */}
              <span>
                {ROLE_WORDS[role].name}: <span class="muted">{ROLE_WORDS[role].may}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <p class="actions">
          <button type="submit">Add member</button>
        </p>
      </form>
    </section>
  );
}
