import type { VNode } from 'preact';
import { Moment } from '../../foundation/web/readable-time.js';
import type { ReceiptsStatus } from '../../rules/receipts/receipts-status.js';

/**
 * The barrier page's word on the journal's receipts (docs/design.md section 5.3): how many entries are sealed
 * into the customer's chain, and what the cloud's last check of it found, with the download beside it.
 */
export function ReceiptsLine(props: { barrierId: string; status: ReceiptsStatus }): VNode {
  const { sealed, checkedAt, broken } = props.status;
  const href = `/barriers/${encodeURIComponent(props.barrierId)}/journal.receipts.jsonl`;
  return (
    <p class="small" data-receipts={broken ? 'broken' : 'intact'}>
      Journal receipts: {sealed} {sealed === 1 ? 'entry' : 'entries'} sealed
      {checkedAt ? (
        <>
          , last checked <Moment date={checkedAt} />:{' '}
          {broken ? (
            <strong class="bad">
              broken at {broken.entry === null ? 'the end of the chain' : `entry ${broken.entry}`}:{' '}
              {broken.reason}
            </strong>
          ) : (
            'intact'
          )}
        </>
      ) : (
        ', not checked yet'
      )}
      . <a href={href}>Download the receipts</a>
    </p>
  );
}
