import { domainToASCII } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCompany } from '../../cloud/rules/companies/companies.js';
import { createCustomer } from '../../cloud/rules/customers/customers.js';
import { addEndpoint } from '../../cloud/rules/events/endpoints.js';
import { liveSigningSecrets, rotateSigningSecret } from '../../cloud/rules/events/signing-secrets.js';
import { sandboxCompany } from '../../cloud/rules/sandbox/sandbox-world.js';
import { BrowserClient, visibleText } from '../support/browser-client.js';
import { signatureCompany, startTestCloud, type TestCloud } from '../support/cloud.js';
import { approveDirectly, companyOwner } from '../support/company-area.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { KeyFileServer } from '../support/keyfile-server.js';
import { startMailServer, type TestMailServer } from '../support/mail-server.js';

/**
 * Registering a company and its members (docs/design.md section 11.1): the form and its refusals, the pending
 * company's page saying what happens next, the owner adding and removing members by e-mail (a real SMTP server
 * receives the notice), and nothing of one company reachable by a member of another.
 */
let database: TestDatabase;
let cloud: TestCloud;
let mail: TestMailServer;
const keyFiles = new KeyFileServer();

beforeAll(async () => {
  database = await createTestDatabase();
  mail = await startMailServer();
  await keyFiles.start();
  cloud = await startTestCloud({
    database,
    env: {
      SMTP_URL: mail.url,
      MAIL_FROM: 'Gatelink <no-reply@test>',
      GATELINK_DEV_KEYFILE_URL: keyFiles.template,
    },
  });
});

afterAll(async () => {
  await cloud?.stop();
  await mail?.stop();
  await keyFiles.stop();
  await database?.close();
});

async function signedInAccount(name: string, email?: string) {
  const customer = await createCustomer(cloud.ctx, { displayName: name, email });
  if (email) {
    await cloud.ctx.db
      .updateTable('customers')
      .set({ email_verified_at: cloud.ctx.clock.now() })
      .where('id', '=', customer.id)
      .execute();
  }
  return { id: customer.id, client: await BrowserClient.signedIn(cloud, customer.id) };
}

function companyIdOf(location: string | undefined): number {
  const match = /^\/company\/(\d+)$/.exec(location ?? '');
  if (!match) throw new Error(`not a company page: ${location}`);
  return Number(match[1]);
}

describe('registering a company', () => {
  it('sends a visitor who is not signed in to sign in first, and back', async () => {
    const page = await new BrowserClient(cloud.app).get('/company/new');
    expect(page.status).toBe(303);
    expect(page.location).toBe('/signin?next=%2Fcompany%2Fnew');
  });

  it('registers a pending company with the account as its owner, a Unicode domain stored as punycode', async () => {
    const { client } = await signedInAccount('Bea');
    await client.get('/company/new');
    const sent = await client.post('/company/new', {
      name: 'Bäckerei Müller',
      contact_email: ' Office@Example.COM ',
      domain: 'https://Bäckerei-Müller.de/contact',
    });
    expect(sent.status).toBe(303);
    const id = companyIdOf(sent.location);
    const row = await cloud.ctx.db
      .selectFrom('companies')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      name: 'Bäckerei Müller',
      domain: domainToASCII('bäckerei-müller.de'),
      contact_email: 'office@example.com',
      status: 'pending',
    });
    const page = visibleText((await client.get(`/company/${id}`)).html);
    expect(page).toContain('Waiting for approval');
    expect(page).toContain('An operator of Gatelink checks every new company before it can call the API');
    expect(page).toContain('Make a key pair and publish it on bäckerei-müller.de');
    expect(page).toContain('Prove you hold the key');
    const list = visibleText((await client.get('/company')).html);
    expect(list).toContain('Bäckerei Müller');
    expect(list).toContain('Owner');
  });

  it('says what is wrong with each field, and keeps what was typed', async () => {
    const { client } = await signedInAccount('Cem');
    await client.get('/company/new');
    const sent = await client.post('/company/new', {
      name: ' ',
      contact_email: 'not-an-address',
      domain: 'localhost',
    });
    expect(sent.status).toBe(400);
    const page = visibleText(sent.html);
    expect(page).toContain("Enter the company's name");
    expect(page).toContain('Enter an e-mail address like name@example.com');
    expect(page).toContain('Check the domain: give a full domain such as acme.example');
    expect(sent.html).toContain('value="not-an-address"');
  });

  it('lets a company without a domain register, to call with a secret', async () => {
    const { client } = await signedInAccount('Dan');
    await client.get('/company/new');
    const sent = await client.post('/company/new', {
      name: 'Clean & Co',
      contact_email: 'a@clean.example',
      domain: '',
    });
    const id = companyIdOf(sent.location);
    const page = visibleText((await client.get(`/company/${id}`)).html);
    expect(page).toContain('Issue your secret on API access');
  });

  it('[attack:web.company-domain-squat] a registration naming a domain first keeps neither the domain nor its calls from the real owner', async () => {
    const { client } = await signedInAccount('Squatter');
    await client.get('/company/new');
    const squat = await client.post('/company/new', {
      name: 'Fake Couriers',
      contact_email: 'x@evil.example',
      domain: 'couriers.example',
    });
    expect(squat.status).toBe(303);
    const real = await signatureCompany(cloud, keyFiles, 'couriers.example');
    const answer = await cloud.signedCall('request', { ref: 'real-1' }, real.signer);
    expect(answer.status).toBe(200);
    const made = await cloud.ctx.db
      .selectFrom('requests')
      .select('company_id')
      .where('ref', '=', 'real-1')
      .executeTakeFirstOrThrow();
    expect(made.company_id).toBe(real.id);
    const squatId = companyIdOf(squat.location);
    await cloud.ctx.db
      .updateTable('companies')
      .set({
        key_proven: (
          await cloud.ctx.db
            .selectFrom('companies')
            .select('key_pub')
            .where('id', '=', real.id)
            .executeTakeFirstOrThrow()
        ).key_pub,
      })
      .where('id', '=', squatId)
      .execute();
    const approval = await cloud.ops('POST', `/ops/companies/${squatId}/approve`);
    expect(approval.status).toBe(409);
    expect(approval.body.error).toBe('domain_taken');
  });

  it('limits how many companies one account may have waiting', async () => {
    const { client } = await signedInAccount('Eve');
    await client.get('/company/new');
    for (let i = 0; i < 5; i++) {
      const sent = await client.post('/company/new', {
        name: `Queue ${i}`,
        contact_email: 'q@q.example',
        domain: '',
      });
      expect(sent.status).toBe(303);
    }
    const refused = await client.post('/company/new', {
      name: 'Queue 5',
      contact_email: 'q@q.example',
      domain: '',
    });
    expect(refused.status).toBe(409);
    expect(visibleText(refused.html)).toContain('You have 5 companies waiting for an operator already');
  });
});

describe('a pending or refused company', () => {
  it('corrects its details until approved, and not after', async () => {
    const owner = await companyOwner(cloud, { name: 'Typo Ltd' });
    await owner.client.get(`/company/${owner.companyId}`);
    const saved = await owner.client.post(`/company/${owner.companyId}/details`, {
      name: 'Tipo Ltd',
      contact_email: 'ops@tipo.example',
      domain: '',
    });
    expect(visibleText(saved.html)).toContain('Details saved.');
    await approveDirectly(cloud, owner.companyId);
    const page = await owner.client.get(`/company/${owner.companyId}`);
    expect(visibleText(page.html)).toContain('Your company can call the API');
    expect(page.html).not.toContain('/details"');
    const late = await owner.client.post(`/company/${owner.companyId}/details`, {
      name: 'Someone Else',
      contact_email: 'ops@tipo.example',
      domain: '',
    });
    expect(late.status).toBe(409);
    const row = await cloud.ctx.db
      .selectFrom('companies')
      .select('name')
      .where('id', '=', owner.companyId)
      .executeTakeFirstOrThrow();
    expect(row.name).toBe('Tipo Ltd');
  });

  it('shows the operators’ reason when refused, and the owner asks again', async () => {
    const owner = await companyOwner(cloud, { name: 'Vague GmbH' });
    await cloud.ctx.db
      .updateTable('companies')
      .set({ status: 'rejected', status_reason: 'Give your real trading name.' })
      .where('id', '=', owner.companyId)
      .execute();
    const page = visibleText((await owner.client.get(`/company/${owner.companyId}`)).html);
    expect(page).toContain('An operator did not approve your company');
    expect(page).toContain('Give your real trading name.');
    const asked = await owner.client.post(`/company/${owner.companyId}/ask-again`);
    expect(visibleText(asked.html)).toContain('Waiting for approval');
  });
});

describe('members', () => {
  it('the owner adds a member by address, who is e-mailed and acts for the company after signing in with it', async () => {
    const owner = await companyOwner(cloud, { name: 'Team Couriers' });
    await owner.client.get(`/company/${owner.companyId}/members`);
    const added = await owner.client.post(`/company/${owner.companyId}/members`, {
      email: 'Mia@Example.com',
    });
    expect(visibleText(added.html)).toContain('mia@example.com is added; we e-mailed them how to sign in.');
    expect(visibleText(added.html)).toContain('has not signed in yet');
    const notice = mail.lastTo('mia@example.com');
    expect(notice?.raw).toContain('You can now act for Team Couriers on Gatelink');

    const mia = await signedInAccount('Mia', 'mia@example.com');
    const list = visibleText((await mia.client.get('/company')).html);
    expect(list).toContain('Team Couriers');
    expect(list).toContain('Developer');
    const members = visibleText((await mia.client.get(`/company/${owner.companyId}/members`)).html);
    expect(members).toContain('Mia (you)');
    expect(members).toContain('You are a developer: you may manage API access');
    expect(members).toContain("The company's owner adds and removes members and gives their roles.");
  });

  it('[attack:web.company-member-unconfirmed] an account that only typed the address, unconfirmed, is not a member', async () => {
    const owner = await companyOwner(cloud, { name: 'Careful Couriers' });
    await owner.client.get(`/company/${owner.companyId}/members`);
    await owner.client.post(`/company/${owner.companyId}/members`, { email: 'noah@example.com' });
    const impostor = await signedInAccount('Not Noah');
    await cloud.ctx.db
      .updateTable('customers')
      .set({ email: 'noah@example.com' })
      .where('id', '=', impostor.id)
      .execute();
    expect((await impostor.client.get(`/company/${owner.companyId}`)).status).toBe(404);
  });

  it('[attack:web.company-member-owner-only] a member cannot add or remove members', async () => {
    const owner = await companyOwner(cloud, { name: 'Flat Couriers' });
    await owner.client.get(`/company/${owner.companyId}/members`);
    await owner.client.post(`/company/${owner.companyId}/members`, { email: 'ola@example.com' });
    const ola = await signedInAccount('Ola', 'ola@example.com');
    await ola.client.get('/company');
    await ola.client.get(`/company/${owner.companyId}/members`);
    const adding = await ola.client.post(`/company/${owner.companyId}/members`, {
      email: 'friend@example.com',
    });
    expect(adding.status).toBe(403);
    expect(visibleText(adding.html)).toContain("Only the company's owner can do this");
    const ownerRow = await cloud.ctx.db
      .selectFrom('company_members')
      .select('id')
      .where('company_id', '=', owner.companyId)
      .where('role', '=', 'owner')
      .executeTakeFirstOrThrow();
    const removing = await ola.client.post(`/company/${owner.companyId}/members/${ownerRow.id}/remove`);
    expect(removing.status).toBe(403);
  });

  it('[attack:web.viewer-changes-nothing] a viewer reads every page and sends no form: not a secret rotated, an endpoint added, changed or removed, an event sent', async () => {
    const owner = await companyOwner(cloud, { name: 'Watched Couriers' });
    await approveDirectly(cloud, owner.companyId);
    await owner.client.get(`/company/${owner.companyId}/members`);
    const added = await owner.client.post(`/company/${owner.companyId}/members`, {
      email: 'vic@example.com',
      role: 'viewer',
    });
    expect(visibleText(added.html)).toContain('Viewer · has not signed in yet');
    const vic = await signedInAccount('Vic', 'vic@example.com');
    await vic.client.get('/company');
    const base = `/company/${owner.companyId}`;
    const sandbox = await sandboxCompany(cloud.ctx, await getCompany(cloud.ctx, owner.companyId));
    // An endpoint on each side, with a signing secret retiring beside the one in use.
    const publicHost = { ...cloud.ctx, resolveHost: async () => [{ address: '93.184.215.14', family: 4 }] };
    const endpoints: Record<'live' | 'sandbox', { id: number; secret: number }> = {
      live: { id: 0, secret: 0 },
      sandbox: { id: 0, secret: 0 },
    };
    for (const [side, holder] of [
      ['live', owner.companyId],
      ['sandbox', sandbox.id],
    ] as const) {
      const url = `https://hooks.example.com/${side}`;
      const { endpoint } = await addEndpoint(publicHost, holder, url);
      const [first] = await liveSigningSecrets(cloud.ctx, endpoint.id);
      await rotateSigningSecret(cloud.ctx, { companyId: holder, endpointId: endpoint.id, url }, first!.id);
      endpoints[side] = { id: endpoint.id, secret: first!.id };
    }
    const live = `/callback/${endpoints.live.id}`;
    const sandboxed = `/sandbox/callback/${endpoints.sandbox.id}`;
    const stored = async () => ({
      endpoints: await cloud.ctx.db
        .selectFrom('endpoints')
        .select(['id', 'url', 'kinds', 'failing_since', 'paused_until'])
        .where('company_id', 'in', [owner.companyId, sandbox.id])
        .orderBy('id')
        .execute(),
      secrets: await cloud.ctx.db
        .selectFrom('callback_secrets')
        .select(['id', 'endpoint_id', 'retires_at'])
        .where('company_id', 'in', [owner.companyId, sandbox.id])
        .orderBy('id')
        .execute(),
    });
    const before = await stored();
    expect(before.endpoints).toHaveLength(2);
    expect(before.secrets).toHaveLength(4);
    for (const path of [
      '',
      '/members',
      '/access',
      '/requests',
      '/journal',
      '/logo',
      '/callback',
      live,
      '/events',
      '/sandbox',
      '/sandbox/callback',
      sandboxed,
      '/sandbox/events',
    ]) {
      expect((await vic.client.get(`${base}${path}`)).status, path).toBe(200);
    }
    expect(visibleText((await vic.client.get(`${base}/members`)).html)).toContain(
      'You are a viewer: you may look at every page and change nothing.',
    );
    // The pages leave out the forms a viewer cannot send; the owner sees them on the same pages.
    for (const path of [
      '',
      '/access',
      '/logo',
      '/callback',
      live,
      '/events',
      '/sandbox/callback',
      sandboxed,
      '/sandbox/events',
    ]) {
      const theirs = (await vic.client.get(`${base}${path}`)).html;
      expect(theirs.match(/<form method="post" action="\/company\/[^"]*"/g) ?? [], path).toEqual([]);
      expect(visibleText(theirs), path).toContain("The company's owner can make you a developer.");
    }
    const owners = (await owner.client.get(`${base}/logo`)).html;
    expect(owners).toMatch(/<form method="post" action="\/company\/\d+\/logo"/);
    // The viewer reads the endpoint's address, its kinds and its secrets, with nothing to send.
    const endpointPage = visibleText((await vic.client.get(`${base}${live}`)).html);
    expect(endpointPage).toContain('https://hooks.example.com/live Working');
    expect(endpointPage).toContain('Every kind of event:');
    expect(endpointPage).toMatch(/whsec_….{4} In use/);
    expect(endpointPage).toContain('Retiring');
    const someEvent = '00000000-0000-4000-8000-000000000000';
    const address = { callback_url: 'https://hooks.example.com/gatelink' };
    const posts = [
      ['/callback', address],
      [live, address],
      [`${live}/kinds`, { take: 'these', kinds: 'ping' }],
      [`${live}/signing-secret`, { replaces: String(endpoints.live.secret + 1) }],
      [`${live}/signing-secret/${endpoints.live.secret}/expire`, {}],
      [`${live}/remove`, {}],
      ['/events/test', {}],
      ['/events/retry', { endpoint: String(endpoints.live.id) }],
      [`/events/${someEvent}/resend`, { endpoint: String(endpoints.live.id) }],
      ['/sandbox/callback', address],
      [sandboxed, address],
      [`${sandboxed}/kinds`, { take: 'every' }],
      [`${sandboxed}/signing-secret`, { replaces: String(endpoints.sandbox.secret + 1) }],
      [`${sandboxed}/signing-secret/${endpoints.sandbox.secret}/expire`, {}],
      [`${sandboxed}/remove`, {}],
      ['/sandbox/events/test', {}],
      ['/sandbox/events/retry', { endpoint: String(endpoints.sandbox.id) }],
      ['/sandbox/outcome', { outcome: 'busy' }],
      ['/access/secret', {}],
      ['/logo/remove', {}],
      ['/details', { name: 'Hijacked', contact_email: 'x@x.example', domain: '' }],
    ] as const;
    for (const [path, form] of posts) {
      const refused = await vic.client.post(`${base}${path}`, form);
      expect(refused.status, path).toBe(403);
      expect(visibleText(refused.html)).toContain("You may look at this company's pages but not change them");
    }
    const company = await cloud.ctx.db
      .selectFrom('companies')
      .select(['name'])
      .where('id', '=', owner.companyId)
      .executeTakeFirstOrThrow();
    expect(company).toEqual({ name: 'Watched Couriers' });
    expect(await stored()).toEqual(before);
    expect(
      await cloud.ctx.db
        .selectFrom('events')
        .select('id')
        .where('company_id', 'in', [owner.companyId, sandbox.id])
        .execute(),
    ).toEqual([]);
    expect(
      (
        await cloud.ctx.db
          .selectFrom('sandboxes')
          .select('outcome')
          .where('company_id', '=', sandbox.id)
          .executeTakeFirstOrThrow()
      ).outcome,
    ).toBe('opened');
  });

  it('the owner changes a member between developer and viewer, and hands the company to one who signed in', async () => {
    const owner = await companyOwner(cloud, { name: 'Handed Couriers' });
    const base = `/company/${owner.companyId}`;
    await owner.client.get(`${base}/members`);
    await owner.client.post(`${base}/members`, { email: 'dora@example.com' });
    await owner.client.post(`${base}/members`, { email: 'ivo@example.com', role: 'viewer' });
    const dora = await signedInAccount('Dora', 'dora@example.com');
    await dora.client.get('/company');
    const rows = async () =>
      Object.fromEntries(
        (
          await cloud.ctx.db
            .selectFrom('company_members')
            .select(['id', 'email', 'customer_id', 'role'])
            .where('company_id', '=', owner.companyId)
            .execute()
        ).map((row) => [row.customer_id === owner.customerId ? 'owner' : row.email, row]),
      );
    const before = await rows();
    expect(before['dora@example.com']!.role).toBe('member');
    expect(before['ivo@example.com']!.role).toBe('viewer');
    const page = visibleText((await owner.client.get(`${base}/members`)).html);
    expect(page).toContain('Developer · dora@example.com');
    expect(page).toMatch(/ivo@example\.com Viewer · has not signed in yet/);

    const doraId = before['dora@example.com']!.id;
    expect((await owner.client.post(`${base}/members/${doraId}/role`, { role: 'viewer' })).status).toBe(303);
    expect((await rows())['dora@example.com']!.role).toBe('viewer');
    expect((await owner.client.post(`${base}/members/${doraId}/role`, { role: 'member' })).status).toBe(303);
    expect((await rows())['dora@example.com']!.role).toBe('member');
    // A forged role, the owner's own row and a stranger's member are refused; nothing changes.
    expect((await owner.client.post(`${base}/members/${doraId}/role`, { role: 'owner' })).status).toBe(400);
    const ownRow = before.owner!.id;
    expect((await owner.client.post(`${base}/members/${ownRow}/role`, { role: 'viewer' })).status).toBe(404);
    // Only to someone who signed in: the invitee who has not cannot own it.
    const ivoId = before['ivo@example.com']!.id;
    const early = await owner.client.post(`${base}/members/${ivoId}/owner`);
    expect(early.status).toBe(409);
    expect(visibleText(early.html)).toContain('They have not signed in yet');

    const handed = await owner.client.post(`${base}/members/${doraId}/owner`);
    expect(handed.status).toBe(200);
    expect(visibleText(handed.html)).toContain('Dora owns the company now; you are a developer.');
    const after = await rows();
    expect(after['dora@example.com']!.role).toBe('owner');
    expect(after.owner!.role).toBe('member');
    // The former owner manages members no more; the new one does.
    const adding = await owner.client.post(`${base}/members`, { email: 'late@example.com' });
    expect(adding.status).toBe(403);
    await dora.client.get(`${base}/members`);
    expect((await dora.client.post(`${base}/members/${ivoId}/role`, { role: 'member' })).status).toBe(303);
  });

  it('[attack:web.company-removed-member] a removed member’s session reaches nothing of the company from then on', async () => {
    const owner = await companyOwner(cloud, { name: 'Leaving Couriers' });
    await owner.client.get(`/company/${owner.companyId}/members`);
    await owner.client.post(`/company/${owner.companyId}/members`, { email: 'pia@example.com' });
    const pia = await signedInAccount('Pia', 'pia@example.com');
    await pia.client.get('/company');
    expect((await pia.client.get(`/company/${owner.companyId}`)).status).toBe(200);
    const member = await cloud.ctx.db
      .selectFrom('company_members')
      .select('id')
      .where('company_id', '=', owner.companyId)
      .where('customer_id', '=', pia.id)
      .executeTakeFirstOrThrow();
    await owner.client.get(`/company/${owner.companyId}/members`);
    const removed = await owner.client.post(`/company/${owner.companyId}/members/${member.id}/remove`);
    expect(removed.status).toBe(303);
    for (const path of ['', '/members', '/access', '/requests', '/journal', '/logo', '/callback']) {
      expect((await pia.client.get(`/company/${owner.companyId}${path}`)).status).toBe(404);
    }
    expect(visibleText((await pia.client.get('/company')).html)).not.toContain('Leaving Couriers');
  });

  it('[attack:web.company-other-company] a member of one company sees and changes nothing of another: 404, as for none', async () => {
    const mine = await companyOwner(cloud, { name: 'Mine Ltd' });
    const theirs = await companyOwner(cloud, { name: 'Theirs Ltd' });
    const missing = await mine.client.get('/company/999999');
    for (const path of ['', '/members']) {
      const page = await mine.client.get(`/company/${theirs.companyId}${path}`);
      expect(page.status).toBe(404);
      expect(visibleText(page.html)).toBe(visibleText(missing.html));
    }
    await mine.client.get(`/company/${mine.companyId}`);
    const posts = [
      ['/details', { name: 'Hijacked', contact_email: 'x@x.example', domain: '' }],
      ['/members', { email: 'spy@example.com' }],
      ['/ask-again', {}],
    ] as const;
    for (const [path, fields] of posts) {
      expect((await mine.client.post(`/company/${theirs.companyId}${path}`, fields)).status).toBe(404);
    }
    const row = await cloud.ctx.db
      .selectFrom('companies')
      .select('name')
      .where('id', '=', theirs.companyId)
      .executeTakeFirstOrThrow();
    expect(row.name).toBe('Theirs Ltd');
    const spies = await cloud.ctx.db
      .selectFrom('company_members')
      .select('id')
      .where('email', '=', 'spy@example.com')
      .execute();
    expect(spies).toEqual([]);
  });
});
