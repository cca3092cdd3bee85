/**
 * The VAPID subject (RFC 8292 section 2.1): how a push service reaches whoever sends. VAPID_SUBJECT when set;
 * else the base URL when it is https (production's always is), else `mailto:no-reply@<its host>`, since a push
 * service refuses an http subject and the demo runs on http://localhost (docs/design.md section 10.6).
 */
export function vapidSubject(configured: string | undefined, baseUrl: string): string {
  if (configured) return configured;
  const url = new URL(baseUrl);
  if (url.protocol === 'https:' && url.hostname !== 'localhost') return url.origin;
  return `mailto:no-reply@${url.hostname}`;
}
