import type { VNode } from 'preact';
import { type PageContext, readerZone } from '../../foundation/web/page.js';
import { RecordLines } from '../../foundation/web/record-lines.js';
import type { Company } from '../../rules/companies/companies.js';
import { memberLines } from '../../rules/member-actions/member-action-words.js';
import type { MemberAction } from '../../rules/member-actions/member-actions.js';
import { operatorLines } from '../../rules/operators/action-words.js';
import type { OperatorAction } from '../../rules/operators/actions.js';
import { CompanyFrame, companyPath } from './company-frame.js';
import { ListEmpty, ListPager } from './listing.js';

/**
 * `/company/<id>/activity` (docs/design.md section 11.8): who did what in the company, newest first: each
 * member's changes from this area, and Gatelink's decisions on the company (approval, refusal, suspension)
 * with the reason it was given. Every member reads it, a viewer too.
 */
export function ActivityPage(props: {
  page: PageContext;
  company: Company;
  actions: MemberAction[];
  before: number | undefined;
  older: number | null;
  decisions: OperatorAction[];
}): VNode {
  const { company } = props;
  const path = companyPath(company, 'activity');
  return (
    <CompanyFrame page={props.page} company={company} section="activity" title="Activity">
      <p class="muted">
        Who changed what in this company, newest first. Times are in {readerZone(props.page)}.
      </p>
      <section class="card" aria-labelledby="member-actions-heading">
        <h3 id="member-actions-heading">{props.before === undefined ? 'What members did' : 'Earlier'}</h3>
        {props.actions.length === 0 ? (
          <ListEmpty
            path={path}
            item="action"
            items="actions"
            filtered={false}
            before={props.before}
            none="Nothing yet: each change a member makes here will appear."
          />
        ) : (
          <RecordLines lines={memberLines(props.actions)} />
        )}
        <ListPager path={path} filters={{}} items="actions" before={props.before} older={props.older} />
      </section>
      {props.before === undefined ? <Decisions decisions={props.decisions} /> : null}
    </CompanyFrame>
  );
}

/** Gatelink's decisions on the company, with the reason the company was given. */
function Decisions(props: { decisions: OperatorAction[] }): VNode {
  return (
    <section class="card" aria-labelledby="decisions-heading">
      <h3 id="decisions-heading">Gatelink's decisions</h3>
      {props.decisions.length === 0 ? (
        <p class="muted">No operator has decided on this company yet.</p>
      ) : (
        <RecordLines lines={operatorLines(props.decisions, 'Gatelink')} />
      )}
    </section>
  );
}
