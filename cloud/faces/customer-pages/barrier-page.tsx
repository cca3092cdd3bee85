import type { VNode } from 'preact';
import { ErrorSummary } from '../../foundation/web/field-errors.js';
import { TextField } from '../../foundation/web/form-fields.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { CsrfField, Layout, type PageContext } from '../../foundation/web/page.js';
import { capitalised, Moment, useReaderZone } from '../../foundation/web/readable-time.js';
import type { AccessHistoryLine } from '../../rules/access-keys/access-history.js';
import { lifetimeText } from '../../rules/access-keys/key-lifetime.js';
import type { KeyOnBarrier } from '../../rules/access-keys/keys-on-barrier.js';
import {
  BARRIER_NAME_MAX,
  type BarrierObject,
  type CustomerBarrier,
} from '../../rules/devices/customer-barriers.js';
import type { Household } from '../../rules/households/members.js';
import type { NotificationChoice } from '../../rules/notification-choices/choices.js';
import type { QuestionView } from '../../rules/opening-questions/question-view.js';
import type { GateLimits, SensedObject } from '../../rules/positions/gate-display.js';
import type { ReceiptsStatus } from '../../rules/receipts/receipts-status.js';
import { AccessHistoryCard } from './access-history-card.js';
import { BarrierLifecycleForms, type ReplaceForm } from './barrier-lifecycle-forms.js';
import { BarrierZoneCard } from './barrier-zone.js';
import { CompanyLogo } from './company-mark.js';
import { GateLimitsCard, type GateLimitsForm, GatePositions } from './gate-position.js';
import { HouseholdCard, type InviteForm, SharedWithYouCard } from './household-card.js';
import { KeyShapeText } from './key-shape.js';
import { NotificationChoiceCard } from './notification-choice.js';
import { PhoneCard, type PhoneCardState } from './phone-card.js';
import { QuestionsCard } from './questions-card.js';
import { ReceiptsLine } from './receipts-line.js';

/**
 * `/barriers/<id>` (docs/design.md section 10.4): whether the controller is online and since when, where each
 * gate with a sensor stands and since when, the companies that may open it with what and for how long, each
 * with a button that withdraws access at once, who gave, changed and withdrew access, the way to its journal,
 * its gate alerts, and its name. What is offered follows the reader's role (docs/design.md section 9.2): a member
 * who may only look gets no button that grants or withdraws, and only the owner gets the barrier's settings and
 * the people who share it; a member gets the way to leave.
 */
export interface BarrierPageProps {
  page: PageContext;
  barrier: CustomerBarrier;
  objects: BarrierObject[];
  keys: KeyOnBarrier[];
  /** Who gave, changed and withdrew access, newest first (section 10.4). */
  history: AccessHistoryLine[];
  rename: { name: string; errors?: FieldErrors };
  replace?: ReplaceForm;
  /** The gates' sensors and the limits' form (section 10.4); `now` tells how long a gate has been open. */
  gates: { objects: SensedObject[]; limits: GateLimits; form: GateLimitsForm; now: Date };
  /** Its members and invitations waiting, for its owner only, and the invitation form as typed. */
  household?: Household;
  invite?: InviteForm;
  /** What the last form did, said at the top. */
  notice?:
    | {
        kind:
          | 'renamed'
          | 'replaced'
          | 'limits'
          | 'zone'
          | 'invited'
          | 'invitation_withdrawn'
          | 'member_removed'
          | 'member_changed'
          | 'joined'
          | 'notifications';
      }
    | { kind: 'withdrawn' | 'shaped'; company: string };
  /** How the phone stands, on a gate that opens on a call from the customer's phone (section 12.6). */
  phone?: PhoneCardState | null;
  /** The journal's receipts: entries sealed and the last check (docs/design.md section 5.3). */
  receipts?: ReceiptsStatus;
  /** What the reader chose to be told of its openings, and their confirmed address (section 10.7). */
  notificationChoice: NotificationChoice & { address: string | null };
  /** Companies waiting for the household's answer before they may open (section 10.8). */
  questions: QuestionView[];
}

export function BarrierPage(props: BarrierPageProps): VNode {
  const { barrier, objects, keys, gates } = props;
  return (
    <Layout title={barrier.name} page={props.page}>
      <p class="small">
        <a href="/barriers">All barriers</a>
      </p>
      {props.notice ? (
        <div class="notice ok" role="status">
          {noticeText(props.notice, barrier.name)}
        </div>
      ) : null}
      <h1>{barrier.name}</h1>
      {barrier.sharedBy !== null ? (
        <p class="muted">
          Shared by {barrier.sharedBy}
          {barrier.role === 'looker' ? '. You can look, not grant.' : ''}
        </p>
      ) : null}
      <p>
        <span class={`badge ${barrier.online ? 'ok' : 'bad'}`}>{barrier.online ? 'Online' : 'Offline'}</span>{' '}
        <ConnectionText barrier={barrier} />
      </p>
      {props.phone ? <PhoneCard phone={props.phone} online={barrier.online} /> : null}
      <QuestionsCard page={props.page} questions={props.questions} />
      <GatePositions objects={gates.objects} limits={gates.limits} now={gates.now} />
      <section class="card" aria-labelledby="access-title">
        <h2 id="access-title">Companies with access</h2>
        {keys.length === 0 ? (
          <p>No company can open this barrier. Companies ask you with a link or QR code.</p>
        ) : (
          <ul class="list">
            {keys.map((key) => (
              <AccessLine
                key={key.keyRef}
                barrierId={barrier.id}
                access={key}
                page={props.page}
                mayGrant={barrier.role !== 'looker'}
              />
            ))}
          </ul>
        )}
        <p>
          <a href={`/barriers/${barrier.id}/journal`}>Journal: every opening of {barrier.name}</a>
        </p>
        {props.receipts ? <ReceiptsLine barrierId={barrier.id} status={props.receipts} /> : null}
      </section>
      <AccessHistoryCard lines={props.history} />
      <NotificationChoiceCard page={props.page} barrierId={barrier.id} choice={props.notificationChoice} />
      <section class="card" aria-labelledby="objects-title">
        <h2 id="objects-title">What it opens</h2>
        {objects.length === 0 ? (
          <p>Its controller reports nothing to open yet.</p>
        ) : (
          <ul class="list">
            {objects.map((object) => (
              <li key={object.numberId}>
                {object.label} <span class="muted small">({KINDS[object.kind] ?? 'output'})</span>
              </li>
            ))}
          </ul>
        )}
      </section>
      {barrier.role === 'owner' ? (
        <OwnerCards {...props} />
      ) : (
        <SharedWithYouCard page={props.page} barrier={barrier} />
      )}
    </Layout>
  );
}

/** What only the owner changes: the people who share it, its zone, gate alerts, name and controller. */
function OwnerCards(props: BarrierPageProps): VNode {
  const { barrier, rename, gates } = props;
  return (
    <>
      {props.household ? (
        <HouseholdCard
          page={props.page}
          barrier={barrier}
          household={props.household}
          invite={props.invite ?? { email: '', mayGrant: false }}
        />
      ) : null}
      <BarrierZoneCard page={props.page} barrierId={barrier.id} zone={barrier.timeZone} />
      <GateLimitsCard
        page={props.page}
        barrierId={barrier.id}
        sensed={gates.objects.length > 0}
        form={gates.form}
      />
      <section class="card" aria-labelledby="rename-title">
        <h2 id="rename-title">Rename</h2>
        <ErrorSummary errors={rename.errors} />
        <form method="post" action={`/barriers/${barrier.id}/name`} novalidate>
          <CsrfField page={props.page} />
          <TextField
            id="name"
            name="name"
            label="Name"
            hint="What you call it, such as Home, Mill Lane 4 or Holiday flat."
            value={rename.name}
            errors={rename.errors}
            maxLength={BARRIER_NAME_MAX}
          />
          <p class="actions">
            <button type="submit" class="secondary">
              Save name
            </button>
          </p>
        </form>
      </section>
      <BarrierLifecycleForms page={props.page} barrier={barrier} replace={props.replace ?? { code: '' }} />
    </>
  );
}

function noticeText(notice: NonNullable<BarrierPageProps['notice']>, barrier: string): string {
  switch (notice.kind) {
    case 'renamed':
      return 'Name saved.';
    case 'limits':
      return 'Gate alerts saved.';
    case 'zone':
      return 'Time zone saved: the hours you allow companies are read in it from now on.';
    case 'replaced':
      return 'Controller replaced: this barrier, its companies and its journal are now on the new controller.';
    case 'withdrawn':
      return `Access withdrawn: ${notice.company} can no longer open ${barrier}.`;
    case 'shaped':
      return `Saved: ${notice.company} may open ${barrier} as shown below, from their next opening on.`;
    case 'invited':
      return 'Invitation sent: they accept it from the e-mail, signed in with that address, within 7 days.';
    case 'invitation_withdrawn':
      return 'Invitation withdrawn: its link no longer works.';
    case 'member_removed':
      return `Removed: they no longer see ${barrier}.`;
    case 'member_changed':
      return 'Saved: what they may do changes at once.';
    case 'joined':
      return `Welcome: ${barrier} is shared with you now.`;
    case 'notifications':
      return `Saved: you are told of ${barrier} as chosen below, from its next opening on.`;
  }
}

const KINDS: Record<string, string> = {
  relay: 'relay output',
  gsm: 'phone call',
  phone: 'call from your phone',
  simulated: 'simulated output',
};

function ConnectionText(props: { barrier: CustomerBarrier }): VNode {
  const { online, onlineSince } = props.barrier;
  if (!onlineSince) return <span class="muted">Its controller has not connected yet.</span>;
  return (
    <span class="muted">
      {online ? 'Connected since ' : 'Not connected since '}
      <Moment date={onlineSince} />
    </span>
  );
}

/** One company's access: who, what, until when, and the withdraw button. */
function AccessLine(props: {
  barrierId: string;
  access: KeyOnBarrier;
  page: PageContext;
  mayGrant: boolean;
}): VNode {
  const { access } = props;
  const { company } = access;
  const zone = useReaderZone();
  return (
    <li class="access">
      <div class="row">
        <CompanyLogo company={company} small />
        <div class="grow">
          <div class="access-company">
            {company.name}{' '}
            {access.expired ? <span class="badge bad">Ended</span> : <span class="badge ok">Has access</span>}
          </div>
          <div class="muted small">
            {company.verifiedDomain ? `Verified domain: ${company.verifiedDomain}` : 'Domain not confirmed'}
          </div>
          <div>May open: {access.objects.map((object) => object.label).join(', ')}</div>
          <KeyShapeText shape={access} />
          {access.askFirstS !== null ? (
            <div class="small" data-asks-first>
              Asks you first: each opening waits up to {access.askFirstS} s for your Allow.
            </div>
          ) : null}
          <div class="muted small">
            {access.expired
              ? `Ended: it lasted ${lifetimeText(access.expiresAt, zone, access.timeZone)}.`
              : `${capitalised(lifetimeText(access.expiresAt, zone, access.timeZone))}.`}{' '}
            Granted on <Moment date={access.issuedAt} />.
          </div>
        </div>
      </div>
      {props.mayGrant ? (
        <form
          method="post"
          action={`/barriers/${props.barrierId}/keys/${access.keyRef}/withdraw`}
          data-confirm={`Withdraw access for ${company.name}?`}
          class="actions"
        >
          <CsrfField page={props.page} />
          <a href={`/barriers/${props.barrierId}/keys/${access.keyRef}/shape`}>
            Change when {company.name} may open
          </a>
          <button type="submit" class="danger" aria-label={`Withdraw access for ${company.name}`}>
            Withdraw access
          </button>
        </form>
      ) : null}
    </li>
  );
}
