import type { CloudContext } from '../../foundation/context.js';
import { requestDeclined } from '../events/event-data.js';
import { answerAsHolder } from './holder-answer.js';
import type { AccessRequest } from './requests.js';

/**
 * The customer who claimed a request says no (docs/design.md sections 3 and 10.3): `claimed` becomes `declined`
 * at once, in one transaction with its `request.declined` event, so the company stops waiting. The event and
 * `status` say only that and when: nothing of the customer or their barriers. A declined request is final: it
 * is neither claimed, granted nor expired afterwards (effectiveState, claimRequest, issueAccessKey and the
 * expiry sweep all take only `new` or `claimed`).
 */
export function declineRequest(
  ctx: CloudContext,
  input: { code: string; customerId: number },
): Promise<AccessRequest> {
  return answerAsHolder(ctx, input, {
    verb: 'decline',
    change: (now) => ({ state: 'declined', declined_at: now }),
    event: 'request.declined',
    data: requestDeclined,
  });
}
