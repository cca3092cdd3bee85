/** `YYYY-MM-DD HH:MM:SS` in UTC, the timestamp form of the company API (docs/design.md section 3). */
export function formatTimestamp(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}
