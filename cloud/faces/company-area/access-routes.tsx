import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { formText, parseForm, textField } from '../../foundation/web/form-input.js';
import { onForm } from '../../foundation/web/form-problem.js';
import { sendPage } from '../../foundation/web/page.js';
import { pageContext } from '../../foundation/web/web-deps.js';
import { expireRetiringSecret, issueSandboxSecret, issueSecret } from '../../rules/call-auth/secret.js';
import { currentSecretId, liveSecrets } from '../../rules/call-auth/secrets-list.js';
import type { Company } from '../../rules/companies/companies.js';
import {
  checkPublishedKey,
  confirmProvenRotation,
  keyProofChallenge,
  proveHeldKey,
} from '../../rules/domain-keys/published-key.js';
import { findSandbox } from '../../rules/sandbox/sandbox-world.js';
import { AccessPage, type AccessProblem, type AccessView } from './access-page.js';
import { actorOf, companyVisit } from './company-access.js';
import type { CompanyAreaDeps } from './company-area-context.js';
import { companyPath } from './company-frame.js';
import type { SandboxView } from './sandbox-access.js';

/**
 * A company's API access (docs/design.md section 11.2): a domain company checks its key file, proves it holds
 * the key and confirms a new one; a company without a domain issues and rotates secrets. Every route goes
 * through `companyVisit`, so anyone but a member gets the same 404 as for a company that does not exist.
 */
const SIGNATURE_FORM = z.object({
  signature: formText(
    z
      .string()
      .trim()
      .min(1, { error: 'Paste the signature the prove command printed.' })
      .max(200, { error: 'A signature is 88 characters of base64; paste only what prove printed.' }),
  ),
});

const SECRET_FORM = z.object({
  replaces: formText(
    z
      .string()
      .regex(/^\d{1,10}$/)
      .transform(Number),
  ),
});

export async function accessRoutes(app: FastifyInstance, deps: CompanyAreaDeps): Promise<void> {
  const { ctx } = deps;
  const accessPath = (company: Company, done?: string) =>
    `${companyPath(company, 'access')}${done ? `?done=${done}` : ''}`;

  app.get('/company/:companyId/access', async (request, reply) => {
    const visit = await companyVisit(deps, request, reply);
    if (!visit) return reply;
    const done = textField(request.query, 'done');
    return show(request, reply, visit.membership.company, { done });
  });

  app.post('/company/:companyId/access/key/check', async (request, reply) => {
    const visit = (await companyVisit(deps, request, reply))!;
    const { company } = visit.membership;
    const checked = await checkPublishedKey(ctx, company, actorOf(visit));
    if (checked.ok) return reply.redirect(accessPath(company, 'checked'), 303);
    return show(request, reply, company, { problem: { form: 'check', message: checked.message } }, 502);
  });

  app.post('/company/:companyId/access/key/proof', async (request, reply) => {
    const visit = (await companyVisit(deps, request, reply))!;
    const { company } = visit.membership;
    return signed(request, reply, company, 'proof', async (signature) => {
      await proveHeldKey(ctx, company, signature, actorOf(visit));
      return accessPath(company, 'proven');
    });
  });

  app.post('/company/:companyId/access/key/rotation', async (request, reply) => {
    const visit = (await companyVisit(deps, request, reply))!;
    const { company } = visit.membership;
    return signed(request, reply, company, 'rotation', async (signature) => {
      await confirmProvenRotation(ctx, company, signature, actorOf(visit));
      return accessPath(company, 'rotated');
    });
  });

  /**
   * The new secret is shown on the answer to this POST only (no-store, like every page); the form names the
   * secret it replaces, so the same form sent twice (a reload, a double click) issues nothing more.
   */
  app.post('/company/:companyId/access/secret', async (request, reply) => {
    const visit = (await companyVisit(deps, request, reply))!;
    const { company } = visit.membership;
    const form = parseForm(SECRET_FORM, request.body);
    const current = currentSecretId(await liveSecrets(ctx, company.id));
    if (!form.ok || form.value.replaces !== current) {
      const message =
        'This form was sent before (a reload, perhaps): the secret it issued was shown once and is not shown again. If you did not copy it, issue another.';
      return show(request, reply, company, { problem: { form: 'secret', message } }, 409);
    }
    const issued = await issueSecret(ctx, company.id, actorOf(visit));
    return show(request, reply, company, { issued: issued.secret });
  });

  /** A sandbox secret, shown on this answer only; as for a live one, the form names the one it replaces. */
  app.post('/company/:companyId/access/sandbox-secret', async (request, reply) => {
    const visit = (await companyVisit(deps, request, reply))!;
    const { company } = visit.membership;
    const form = parseForm(SECRET_FORM, request.body);
    const current = currentSecretId(await sandboxSecrets(company));
    if (!form.ok || form.value.replaces !== current) {
      const message =
        'This form was sent before (a reload, perhaps): the sandbox secret it made was shown once and is not shown again. If you did not copy it, make another.';
      return show(request, reply, company, { problem: { form: 'sandbox-secret', message } }, 409);
    }
    const issued = await issueSandboxSecret(ctx, company.id, actorOf(visit));
    return show(request, reply, company, { sandboxIssued: issued.secret });
  });

  /** A replaced secret ended before its 24 hours are over (a leaked one); the list says which are left. */
  app.post('/company/:companyId/access/secret/:secretId/expire', async (request, reply) => {
    const visit = (await companyVisit(deps, request, reply))!;
    const { company } = visit.membership;
    const secretId = z.coerce
      .number()
      .int()
      .positive()
      .max(2_147_483_647)
      .safeParse((request.params as { secretId?: unknown }).secretId);
    if (!secretId.success || !(await expireRetiringSecret(ctx, company.id, secretId.data, actorOf(visit)))) {
      const message = 'That secret is no longer among those still working: the list below is up to date.';
      return show(request, reply, company, { problem: { form: 'secret', message } }, 409);
    }
    return reply.redirect(accessPath(company, 'expired'), 303);
  });

  async function signed(
    request: FastifyRequest,
    reply: FastifyReply,
    company: Company,
    form: 'proof' | 'rotation',
    work: (signature: string) => Promise<string>,
  ): Promise<FastifyReply> {
    const typed = textField(request.body, 'signature');
    const parsed = parseForm(SIGNATURE_FORM, request.body);
    const again = (message: string, status: number) =>
      show(request, reply, company, { problem: { form, message, signature: typed } }, status);
    if (!parsed.ok) return again(parsed.errors.signature ?? 'Paste the signature.', 400);
    const done = await onForm(reply, ['key_proof_failed', 'key_fetch_failed', 'conflict'], () =>
      work(parsed.value.signature),
    );
    if (!done.ok) return again(done.message, done.status);
    return reply.redirect(done.value, 303);
  }

  async function show(
    request: FastifyRequest,
    reply: FastifyReply,
    company: Company,
    view: { done?: string; problem?: AccessProblem; issued?: string; sandboxIssued?: string },
    status = 200,
  ): Promise<FastifyReply> {
    const page = pageContext(request, reply);
    return sendPage(
      reply,
      <AccessPage
        page={page}
        company={company}
        baseUrl={ctx.baseUrl()}
        view={await accessView(company)}
        sandbox={await sandboxView(company)}
        {...view}
      />,
      status,
    );
  }

  /** The sandbox's secrets still working (one at most: a new one ends the one before at once). */
  async function sandboxSecrets(company: Company) {
    const sandbox = await findSandbox(ctx, company.id);
    return sandbox ? liveSecrets(ctx, sandbox.id) : [];
  }

  async function sandboxView(company: Company): Promise<SandboxView> {
    if (company.domain) return { kind: 'domain' };
    const secrets = await sandboxSecrets(company);
    return { kind: 'secret', secrets, replaces: currentSecretId(secrets) };
  }

  async function accessView(company: Company): Promise<AccessView> {
    if (!company.domain) {
      const secrets = await liveSecrets(ctx, company.id);
      return { kind: 'secret', secrets, replaces: currentSecretId(secrets), now: ctx.clock.now() };
    }
    const candidate = company.key_published;
    return {
      kind: 'domain',
      domain: company.domain,
      challenge: candidate ? keyProofChallenge(ctx, company, candidate) : null,
    };
  }
}
