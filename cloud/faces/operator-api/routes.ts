import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { isPrintableText, notPrintableMessage } from '../../../shared/printable-text.js';
import { MAX_ID, validate } from '../../foundation/http/validation.js';
import { issueSecret } from '../../rules/call-auth/secret.js';
import { describeCompany, getCompany, listCompanies } from '../../rules/companies/companies.js';
import { normalizeDomain } from '../../rules/companies/domains.js';
import {
  addCompany,
  approve,
  confirmKey,
  domainKeyFingerprint,
  MAX_REASON_LENGTH,
  recordSecret,
  reject,
  resume,
  suspend,
} from '../../rules/companies/review.js';
import { createCustomer } from '../../rules/customers/customers.js';
import type { BrokerAccounts } from '../../rules/devices/device-lifecycle.js';
import { createDevice, listDevices } from '../../rules/devices/devices.js';
import { listJournal } from '../../rules/journal/journal.js';
import { MEMBER_ACTIONS_SHOWN, memberActions } from '../../rules/member-actions/member-actions.js';
import { companyActions, OPERATOR_API } from '../../rules/operators/actions.js';
import { sandboxUse } from '../../rules/sandbox/sandbox-use.js';
import { deviceLifecycleRoutes } from './device-lifecycle-routes.js';
import { eventsRoutes } from './events-routes.js';
import type { OperatorApiContext } from './operator-api-context.js';
import { requireOperatorToken } from './operator-bearer.js';
import { receiptsRoutes } from './receipts-routes.js';
import { releaseRoutes } from './release-routes.js';

/**
 * The operator API (docs/design.md section 8) under `/ops/`, bearer `OPERATOR_TOKEN`. `gatelink-admin` is its
 * client; the CLI never opens the database itself.
 */
const idParams = z.object({ id: z.coerce.number().int().positive().max(MAX_ID) });
const companyBody = z.object({
  name: z.string().trim().min(1).max(100),
  domain: z.string().trim().min(1).max(253).optional(),
  contact_email: z.email().optional(),
});
/** A reason the company reads (docs/design.md section 11.5): printable text, one paragraph. */
const reasonText = z
  .string()
  .trim()
  .min(1)
  .max(MAX_REASON_LENGTH)
  .refine(isPrintableText, { message: notPrintableMessage('reason') });
const rejectBody = z.object({ reason: reasonText });
const suspendBody = z.object({ reason: reasonText.optional() });
const deviceBody = z.object({ label: z.string().trim().min(1).max(64) });
const customerBody = z.object({
  display_name: z.string().trim().min(1).max(100),
  email: z.email().optional(),
});
const journalQuery = z.object({
  device: z.string().optional(),
  company: z.coerce.number().int().positive().max(MAX_ID).optional(),
  before: z.coerce.number().int().positive().max(MAX_ID).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

export async function opsRoutes(
  app: FastifyInstance,
  options: { ctx: OperatorApiContext; token: string; accounts: BrokerAccounts },
): Promise<void> {
  const { ctx } = options;
  app.addHook('onRequest', requireOperatorToken(options.token));

  app.get('/ops/companies', async () => ({ companies: (await listCompanies(ctx)).map(describeCompany) }));

  app.post('/ops/companies', async (request) => {
    const body = validate(companyBody, request.body);
    let domain: string | undefined;
    if (body.domain !== undefined) {
      const normalized = normalizeDomain(body.domain);
      if (!normalized)
        throw new ApiError('invalid_field', {
          field: 'domain',
          message: 'domain is not a valid domain name.',
        });
      domain = normalized;
    }
    const company = await addCompany(
      ctx,
      { name: body.name, domain, contactEmail: body.contact_email },
      OPERATOR_API,
    );
    return { company: describeCompany(company) };
  });

  app.get('/ops/companies/:id', async (request) => {
    const { id } = validate(idParams, request.params);
    const company = describeCompany(await getCompany(ctx, id));
    const actions = (await companyActions(ctx, id)).map((action) => ({
      ...action,
      at: action.at.toISOString(),
    }));
    // What its members did last, as the console's page of the company shows it (docs/design.md section 11.8).
    const members = await memberActions(ctx, id, { limit: MEMBER_ACTIONS_SHOWN });
    const member_actions = members.actions.map(({ at, member, action, detail, sandbox }) => ({
      at: at.toISOString(),
      member,
      action,
      detail,
      sandbox,
    }));
    const use = await sandboxUse(ctx, id);
    const sandbox = use && {
      made_at: use.madeAt.toISOString(),
      requests: use.requests,
      openings: use.openings,
      last_opening_at: use.lastOpeningAt?.toISOString() ?? null,
      outcome: use.outcome,
      // The first endpoint's, as before there were several (docs/design.md section 6.2); `endpoints` has all.
      callback_url: use.endpoints[0]?.url ?? null,
      callback_failing: use.endpoints[0]?.failing ?? false,
      endpoints: use.endpoints,
    };
    return { company, actions, member_actions, sandbox };
  });

  app.post('/ops/companies/:id/approve', async (request) => {
    const { id } = validate(idParams, request.params);
    const company = await approve(ctx, id, OPERATOR_API, { proofRequired: false });
    return { company: describeCompany(company), fingerprint: domainKeyFingerprint(company.key_pub) };
  });

  app.post('/ops/companies/:id/suspend', async (request) => {
    const { id } = validate(idParams, request.params);
    const body = validate(suspendBody, request.body ?? {});
    return { company: describeCompany(await suspend(ctx, id, OPERATOR_API, body.reason ?? null)) };
  });

  app.post('/ops/companies/:id/reject', async (request) => {
    const { id } = validate(idParams, request.params);
    const body = validate(rejectBody, request.body ?? {});
    return { company: describeCompany(await reject(ctx, id, OPERATOR_API, body.reason)) };
  });

  app.post('/ops/companies/:id/resume', async (request) => {
    const { id } = validate(idParams, request.params);
    return { company: describeCompany(await resume(ctx, id, OPERATOR_API)) };
  });

  app.post('/ops/companies/:id/secret', async (request) => {
    const { id } = validate(idParams, request.params);
    const issued = await issueSecret(ctx, id);
    await recordSecret(ctx, id, OPERATOR_API);
    return {
      org_id: id,
      secret: issued.secret,
      previous_valid_until: issued.previousValidUntil?.toISOString() ?? null,
    };
  });

  app.post('/ops/companies/:id/confirm-key', async (request) => {
    const { id } = validate(idParams, request.params);
    const company = await confirmKey(ctx, id, OPERATOR_API);
    return { company: describeCompany(company), fingerprint: domainKeyFingerprint(company.key_pub) };
  });

  app.get('/ops/devices', async () => ({ devices: await listDevices(ctx) }));

  app.post('/ops/devices', async (request) => {
    const body = validate(deviceBody, request.body);
    // The address a controller provisions against: the cloud's public one, not the one this call came in on.
    return { device: await createDevice(ctx, body), cloud_url: ctx.baseUrl() };
  });

  app.post('/ops/customers', async (request) => {
    const body = validate(customerBody, request.body);
    return { customer: await createCustomer(ctx, { displayName: body.display_name, email: body.email }) };
  });

  app.get('/ops/journal', async (request) => {
    const query = validate(journalQuery, request.query);
    return {
      entries: await listJournal(ctx, {
        deviceId: query.device,
        companyId: query.company,
        before: query.before,
        limit: query.limit,
      }),
    };
  });

  await eventsRoutes(app, ctx);
  await deviceLifecycleRoutes(app, { ctx, accounts: options.accounts });
  await receiptsRoutes(app, ctx);
  await app.register(releaseRoutes, { ctx });
}
