import type { VNode } from 'preact';
import { CsrfField, Layout, type PageContext } from '../../foundation/web/page.js';
import { Moment } from '../../foundation/web/readable-time.js';
import { type InvitationView, maskedAddress } from '../../rules/households/invitations.js';

/** Who reads an open invitation: nobody signed in, its invited account, another account, or the barrier's owner. */
export type InvitationReader = 'signed-out' | 'invited' | 'other-address' | 'owner';

/**
 * `/invitations/<token>` (docs/design.md section 9.2): who invites the reader to which barrier, and the way on:
 * Accept for the invited account, sign in or up for nobody signed in, and for another account the address it
 * is for, masked, so that the link says whom it wants without giving a forwarded address away.
 */
export function InvitationPage(props: {
  page: PageContext;
  view: InvitationView;
  reader: InvitationReader;
  path: string;
}): VNode {
  const { view, page } = props;
  if (view.kind === 'unknown') {
    return (
      <Layout title="No such invitation" page={page}>
        <section class="card">
          <h1>No such invitation</h1>
          <p>
            No invitation has this link. Check that it was copied whole, or ask whoever invited you to send it
            again.
          </p>
        </section>
      </Layout>
    );
  }
  const { invitation } = view;
  const heading = `${invitation.ownerName} invites you to share ${invitation.barrierName}`;
  return (
    <Layout title={heading} page={page}>
      <section class="card" aria-labelledby="invitation-title">
        <h1 id="invitation-title">{heading}</h1>
        {view.kind === 'open' ? (
          <OpenInvitation
            {...props}
            mayGrant={invitation.mayGrant}
            email={invitation.email}
            expiresAt={invitation.expiresAt}
          />
        ) : (
          <p>{ENDED[view.kind]}</p>
        )}
      </section>
    </Layout>
  );
}

const ENDED = {
  used: 'This invitation has been accepted already: each invitation works once. If it was you, the barrier is on your list.',
  withdrawn:
    'This invitation was withdrawn, or the barrier is no longer shared: ask whoever invited you for a new one.',
  expired: 'This invitation has expired: invitations work for 7 days. Ask whoever invited you for a new one.',
} as const;

function OpenInvitation(props: {
  page: PageContext;
  reader: InvitationReader;
  path: string;
  mayGrant: boolean;
  email: string;
  expiresAt: Date;
}): VNode {
  const what = (
    <>
      <p>
        {props.mayGrant
          ? 'You would see who may open it and every opening, and give and withdraw companies’ access.'
          : 'You would see who may open it and every opening; you would not give or withdraw access.'}
      </p>
      <p class="muted small">
        The link works once, until <Moment date={props.expiresAt} />.
      </p>
    </>
  );
  const next = encodeURIComponent(props.path);
  switch (props.reader) {
    case 'invited':
      return (
        <>
          {what}
          <form method="post" action={`${props.path}/accept`} class="actions">
            <CsrfField page={props.page} />
            <button type="submit">Accept</button>
          </form>
        </>
      );
    case 'signed-out':
      return (
        <>
          {what}
          <p>
            Sign in, or sign up, with the e-mail address the invitation was sent to; then you come back here.
          </p>
          <p class="actions">
            <a class="button" href={`/signin?next=${next}`}>
              Sign in
            </a>{' '}
            <a href={`/signup?next=${next}`}>Sign up</a>
          </p>
        </>
      );
    case 'owner':
      return <p>This barrier is already yours.</p>;
    case 'other-address':
      return (
        <p>
          This invitation is for another e-mail address, {maskedAddress(props.email)}. Sign out, then sign in
          with that address (a code is e-mailed to it) and open this link again.
        </p>
      );
  }
}
