/**
 * The time zones a person may choose (docs/design.md sections 3.1 and 10.1), for a barrier and for an account
 * alike: UTC first, then every IANA name this runtime knows, as `isTimeZone` (./wall-clock.ts) accepts them.
 */
export function timeZones(): string[] {
  return ['UTC', ...Intl.supportedValuesOf('timeZone').filter((zone) => zone !== 'UTC')];
}
