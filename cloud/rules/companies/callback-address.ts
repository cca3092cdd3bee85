import { isIP } from 'node:net';
import type { CompanyChangeContext } from '../company-changes/company-changes.js';
import { nonPublicRange } from '../domain-keys/public-address.js';
import { asciiDomainProblem } from './domains.js';

/** Every address a host name resolves to; cloud/links/outbound-http/safe-connection.ts's `Resolver` is one. */
export type HostResolver = (hostname: string) => Promise<readonly { address: string }[]>;

/** What saving a callback address (../events/endpoints.ts) stands on beyond the ground: resolving it as event delivery will. */
export interface CallbackAddressContext extends CompanyChangeContext {
  /** Every address a host name resolves to (DNS); tests stand in for the network here. */
  readonly resolveHost: HostResolver;
}

/**
 * A company's callback address (docs/design.md section 11.4): where its events are delivered (section 6). The
 * same address rules as the key-file fetch (section 2): https, and a host whose every address is public, so
 * that a company cannot make the service call into its own network. Checked when saved, here, and again at
 * every delivery on the address actually connected to, since a name may resolve elsewhere later.
 * `GATELINK_DEV_ALLOW_PRIVATE_CALLBACKS=1` (tests only; refused in production) lets http and private
 * addresses through.
 */
export const MAX_CALLBACK_URL_LENGTH = 2048;

export interface CallbackRules {
  resolve: HostResolver;
  allowPrivate: boolean;
}

export type CallbackCheck = { ok: true; url: URL; addresses: string[] } | { ok: false; problem: string };

/** What is wrong with the address as written, before anything is looked up; or the parsed URL. */
export function callbackUrlProblem(text: string, allowPrivate: boolean): { url: URL } | { problem: string } {
  if (text.length > MAX_CALLBACK_URL_LENGTH) {
    return { problem: `Use an address of at most ${MAX_CALLBACK_URL_LENGTH} characters.` };
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: 'Enter a whole address, such as https://hooks.example.com/gatelink.' };
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    return { problem: 'The callback address must start with https://: events are sent over TLS only.' };
  }
  if (url.username || url.password) {
    return { problem: 'Leave the user name and password out of the address; events are signed instead.' };
  }
  if (url.hash) return { problem: 'Leave the #fragment out of the address: it is never sent.' };
  const host = hostOf(url);
  if (isIP(host) === 0) {
    const problem = asciiDomainProblem(host);
    if (problem) return { problem: `Check the host name: ${problem}.` };
  } else if (!allowPrivate) {
    const range = nonPublicRange(host);
    if (range) return { problem: `${host} is a ${range} address; use a public one.` };
  }
  return { url };
}

/** The URL and the addresses its host resolves to, every one public; or what is wrong. */
export async function checkCallbackAddress(text: string, rules: CallbackRules): Promise<CallbackCheck> {
  const written = callbackUrlProblem(text, rules.allowPrivate);
  if ('problem' in written) return { ok: false, problem: written.problem };
  const host = hostOf(written.url);
  if (isIP(host) !== 0) return { ok: true, url: written.url, addresses: [host] };
  let addresses: string[];
  try {
    addresses = (await rules.resolve(host)).map((answer) => answer.address);
  } catch {
    return { ok: false, problem: `${host} could not be resolved in DNS; check the name.` };
  }
  if (addresses.length === 0) return { ok: false, problem: `${host} has no address in DNS.` };
  if (!rules.allowPrivate) {
    for (const address of addresses) {
      const range = nonPublicRange(address);
      if (range)
        return {
          ok: false,
          problem: `${host} resolves to ${address}, a ${range} address; use a public host.`,
        };
    }
  }
  return { ok: true, url: written.url, addresses };
}

/** The host as connected to: an IPv6 literal without its brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}
