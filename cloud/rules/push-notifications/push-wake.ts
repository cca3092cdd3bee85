/**
 * The channel that wakes the push delivery at once (docs/design.md section 10.6): notified by the journal's
 * triggers when an entry gets its outcome (push-wake.sql, migration 0022) and by a question asked
 * (cloud/rules/opening-questions/asking.ts), listened on by the delivery's component (cloud/components.ts).
 */
export const PUSH_WAKE_CHANNEL = 'gatelink_push';
