import type { CloudContext } from '../../foundation/context.js';
import { requestReleased } from '../events/event-data.js';
import { answerAsHolder } from './holder-answer.js';
import type { AccessRequest } from './requests.js';

/**
 * The customer who claimed a request lets it go (docs/design.md sections 3 and 10.3): someone who pressed
 * Continue while signed in with the wrong address is not left with a request no account can answer. `claimed`
 * becomes `new` again, its customer and claim time cleared, in one transaction with its `request.released`
 * event, so the company's `status` says `new` without `claimed_at` and another account may claim it. Only the
 * holder releases, and only a `claimed` request: anyone else, or any other state, changes nothing.
 */
export function releaseRequest(
  ctx: CloudContext,
  input: { code: string; customerId: number },
): Promise<AccessRequest> {
  return answerAsHolder(ctx, input, {
    verb: 'release',
    change: () => ({ state: 'new', customer_id: null, claimed_at: null, handed_by: null }),
    event: 'request.released',
    data: requestReleased,
  });
}
