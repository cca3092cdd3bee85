import type { VNode } from 'preact';
import { z } from 'zod';
import { MAX_ID } from '../../foundation/http/validation.js';
import { Moment } from '../../foundation/web/readable-time.js';
import { CHOOSABLE_KINDS } from '../../rules/events/callback-kinds.js';
import type { EndpointState } from '../../rules/events/delivery-log.js';

/**
 * How the company area says where an endpoint stands (docs/design.md section 6.2), alike on the callback pages
 * and the events page: working, paused after a failed attempt, or failing after an event's last attempt, with
 * the time in the reader's zone; and the kinds it takes.
 */

/** An endpoint's id as a path or a form names it; anything else is no endpoint of the company. */
export const ENDPOINT_ID = z.coerce.number().int().positive().max(MAX_ID);

export function EndpointBadge(props: { state: Pick<EndpointState, 'failingSince' | 'pausedUntil'> }): VNode {
  const { state } = props;
  // The badge holds one word, so that it never runs off a phone's screen; the time follows it as text.
  if (state.failingSince) {
    return (
      <>
        <span class="badge bad">Failing</span> since <Moment date={state.failingSince} seconds />
      </>
    );
  }
  if (state.pausedUntil) {
    return (
      <>
        <span class="badge wait">Paused</span> until <Moment date={state.pausedUntil} seconds />
      </>
    );
  }
  return <span class="badge ok">Working</span>;
}

/** "Every kind", or "3 of 14 kinds": a list saved is those only, even when it names every kind there is today. */
export function kindsWords(kinds: readonly string[] | null): string {
  if (kinds === null) return 'Every kind';
  return `${kinds.length} of ${CHOOSABLE_KINDS.length} ${CHOOSABLE_KINDS.length === 1 ? 'kind' : 'kinds'}`;
}

/** "Nothing waiting", "1 event waiting", "12 events waiting". */
export function waitingWords(waiting: number): string {
  if (waiting === 0) return 'Nothing waiting';
  return `${waiting} ${waiting === 1 ? 'event' : 'events'} waiting`;
}
