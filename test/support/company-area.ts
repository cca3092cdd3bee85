import { registerCompany } from '../../cloud/rules/companies/members.js';
import { changeCompany } from '../../cloud/rules/company-changes/company-changes.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { actingMember } from '../../cloud/rules/member-actions/member-actions.js';
import { BrowserClient } from './browser-client.js';
import type { TestCloud } from './cloud.js';

/**
 * What the company area's suites share: an account that registered a company (its owner) and is signed in on a
 * browser. The registration form itself is tried in test/web/company-registration.test.ts.
 */
export interface CompanyOwner {
  customerId: number;
  companyId: number;
  client: BrowserClient;
}

export async function companyOwner(
  cloud: TestCloud,
  options: { name?: string; domain?: string | null; email?: string } = {},
): Promise<CompanyOwner> {
  const email = options.email ?? `owner-${Math.random().toString(36).slice(2)}@example.com`;
  const customer = await createCustomer(cloud.ctx, { displayName: 'Owner', email });
  const company = await registerCompany(
    cloud.ctx,
    actingMember({ customerId: customer.id, displayName: 'Owner', email }),
    {
      name: options.name ?? 'Parcel Express',
      contactEmail: 'ops@example.com',
      domain: options.domain ?? null,
    },
  );
  return {
    customerId: customer.id,
    companyId: company.id,
    client: await BrowserClient.signedIn(cloud, customer.id),
  };
}

/** Moves a company to `approved` straight in the database, as an operator would have. */
export async function approveDirectly(cloud: TestCloud, companyId: number): Promise<void> {
  await changeCompany(cloud.ctx, companyId, ({ db }) =>
    db
      .updateTable('companies')
      .set({ status: 'approved', approved_at: cloud.ctx.clock.now() })
      .where('id', '=', companyId)
      .execute(),
  );
}
