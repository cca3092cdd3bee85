import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientAddressKey } from '../../foundation/web/client-address.js';
import { endSession } from '../../foundation/web/sessions.js';
import { signInBrowser, type WebDeps } from '../../foundation/web/web-deps.js';
import { forgetPendingCode } from './pending-code.js';

/**
 * Signs this browser in as `customerId` with a new session (docs/design.md section 10.2). A session the browser
 * had before ends first: signing in never keeps a session that existed before, so a session planted before
 * sign-in is worth nothing after it. Nor an e-mail code it waited for: the address stays on no browser past
 * its use.
 */
export async function signInAs(
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  customerId: number,
): Promise<void> {
  if (request.customer) await endSession(deps.ctx, request.customer.idHash);
  forgetPendingCode(deps, request, reply);
  await signInBrowser(deps, reply, customerId);
}

/** The key the per-address limits count this request under. */
export function clientKey(request: FastifyRequest): string {
  return clientAddressKey(request.ip);
}

/** A path with its query; parameters without a value are left out. */
export function withQuery(path: string, params: Readonly<Record<string, string | undefined>>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, value);
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}
