import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { strictPublicKeyFromBase64 } from '../../shared/crypto/ed25519.js';
import { ApiError } from '../../shared/errors.js';
import { issueSecret } from '../auth/secret.js';
import {
  approveCompany,
  confirmKeyRotation,
  createCompany,
  describeCompany,
  getCompany,
  listCompanies,
  suspendCompany,
} from '../companies/companies.js';
import { normalizeDomain } from '../companies/domains.js';
import type { CloudContext } from '../context.js';
import { createCustomer } from '../customers/customers.js';
import { createDevice, listDevices } from '../devices/devices.js';
import { MAX_ID, validate } from '../http/validation.js';
import { listJournal } from '../journal/journal.js';
import { eventsRoutes } from './events-routes.js';

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
  options: { ctx: CloudContext; token: string },
): Promise<void> {
  const { ctx } = options;
  const expected = Buffer.from(`Bearer ${options.token}`);

  app.addHook('onRequest', async (request) => {
    const presented = Buffer.from(request.headers.authorization ?? '');
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
      throw new ApiError('unauthorized');
    }
  });

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
    const company = await createCompany(ctx, { name: body.name, domain, contactEmail: body.contact_email });
    return { company: describeCompany(company) };
  });

  app.get('/ops/companies/:id', async (request) => {
    const { id } = validate(idParams, request.params);
    return { company: describeCompany(await getCompany(ctx, id)) };
  });

  app.post('/ops/companies/:id/approve', async (request) => {
    const { id } = validate(idParams, request.params);
    const company = await approveCompany(ctx, id);
    return { company: describeCompany(company), fingerprint: fingerprintOf(company.key_pub) };
  });

  app.post('/ops/companies/:id/suspend', async (request) => {
    const { id } = validate(idParams, request.params);
    return { company: describeCompany(await suspendCompany(ctx, id)) };
  });

  app.post('/ops/companies/:id/secret', async (request) => {
    const { id } = validate(idParams, request.params);
    const issued = await issueSecret(ctx, id);
    return {
      org_id: id,
      secret: issued.secret,
      previous_valid_until: issued.previousValidUntil?.toISOString() ?? null,
    };
  });

  app.post('/ops/companies/:id/confirm-key', async (request) => {
    const { id } = validate(idParams, request.params);
    const company = await confirmKeyRotation(ctx, id);
    return { company: describeCompany(company), fingerprint: fingerprintOf(company.key_pub) };
  });

  app.get('/ops/devices', async () => ({ devices: await listDevices(ctx) }));

  app.post('/ops/devices', async (request) => {
    const body = validate(deviceBody, request.body);
    return { device: await createDevice(ctx, body) };
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
}

function fingerprintOf(key: string | null): string | null {
  return key ? strictPublicKeyFromBase64(key).fingerprint : null;
}
