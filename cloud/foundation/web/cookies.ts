/**
 * The cookie rules of docs/design.md section 10: HttpOnly, SameSite=Lax, and Secure whenever the service is
 * served over https. Over plain http (the demo on localhost) a Secure cookie would never come back, so it is
 * left off there; over https the names take the `__Host-` prefix, which browsers accept only from a Secure,
 * host-only, path-`/` cookie, so that no sibling subdomain can plant one.
 */
export interface CookiePolicy {
  readonly secure: boolean;
  readonly sessionName: string;
  readonly csrfName: string;
  /** The e-mail code a browser waits for, sealed (docs/design.md section 10.2). */
  readonly pendingCodeName: string;
  readonly options: {
    readonly httpOnly: true;
    readonly sameSite: 'lax';
    readonly secure: boolean;
    readonly path: '/';
  };
}

export function cookiePolicy(baseUrl: string): CookiePolicy {
  const secure = new URL(baseUrl).protocol === 'https:';
  const prefix = secure ? '__Host-' : '';
  return {
    secure,
    sessionName: `${prefix}gatelink-session`,
    csrfName: `${prefix}gatelink-csrf`,
    pendingCodeName: `${prefix}gatelink-pending-code`,
    options: { httpOnly: true, sameSite: 'lax', secure, path: '/' },
  };
}
