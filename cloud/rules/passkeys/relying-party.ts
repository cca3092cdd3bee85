import type { CloudContext } from '../../foundation/context.js';

/**
 * Who the passkeys are for (docs/design.md section 10.2): the host of BASE_URL is the relying party id, and its
 * origin the only origin a ceremony may come from. A passkey made for another site, or a response relayed from
 * a page on another origin, fails verification.
 */
export interface RelyingParty {
  readonly id: string;
  readonly origin: string;
  readonly name: string;
}

export function relyingParty(ctx: CloudContext): RelyingParty {
  const url = new URL(ctx.baseUrl());
  return { id: url.hostname, origin: url.origin, name: 'Gatelink' };
}
