import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGO_UPLOADS } from '../../cloud/faces/company-area/logo-routes.js';
import { createRequest } from '../../cloud/rules/requests/requests.js';
import { grantKey, insertEntries, journalBarrier } from '../support/barrier-journal.js';
import { type BrowserClient, type PageAnswer, visibleText } from '../support/browser-client.js';
import { startTestCloud, type TestCloud } from '../support/cloud.js';
import { approveDirectly, type CompanyOwner, companyOwner } from '../support/company-area.js';
import { signedInCustomer } from '../support/customer-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  animatedWebp,
  decompressionBomb,
  jpegWithMetadata,
  pngLogo,
  SVG_LOGO,
  twoColourImage,
} from '../support/logo-files.js';

/**
 * A company's logo (docs/design.md section 11.3) through the pages: the upload form and its refusals beside
 * the field, the image served from the service's address for good, the logo on the customer's request page,
 * consent and journal, and no way for another company's member to see or change it.
 */
let database: TestDatabase;
let cloud: TestCloud;

beforeAll(async () => {
  database = await createTestDatabase();
  cloud = await startTestCloud({ database });
});

afterAll(async () => {
  await cloud?.stop();
  await database?.close();
});

interface FilePart {
  bytes: Buffer;
  filename: string;
  type: string;
}

/** Posts the logo form as a browser does: multipart, the page's token first, then the file. */
async function postLogo(
  client: BrowserClient,
  path: string,
  file: FilePart | null,
  extra: { fields?: Record<string, string>; files?: FilePart[]; headers?: Record<string, string> } = {},
): Promise<PageAnswer> {
  const form = new FormData();
  form.append('_csrf', client.csrfToken);
  for (const [name, value] of Object.entries(extra.fields ?? {})) form.append(name, value);
  for (const part of [...(file ? [file] : []), ...(extra.files ?? [])]) {
    form.append('logo', new Blob([new Uint8Array(part.bytes)], { type: part.type }), part.filename);
  }
  if (!file && !extra.files) form.append('logo', new Blob([], { type: 'application/octet-stream' }), '');
  const body = new Response(form);
  const cookie = ['gatelink-session', 'gatelink-csrf']
    .map((name) => `${name}=${client.cookie(name) ?? ''}`)
    .join('; ');
  const response = await cloud.app.inject({
    method: 'POST',
    url: path,
    headers: {
      accept: 'text/html',
      cookie,
      'content-type': body.headers.get('content-type')!,
      ...extra.headers,
    },
    payload: Buffer.from(await body.arrayBuffer()),
  });
  return { status: response.statusCode, html: response.body, headers: response.headers, location: undefined };
}

async function logoOwner(options: { domain?: string } = {}): Promise<CompanyOwner & { path: string }> {
  const owner = await companyOwner(cloud, { name: 'Logo Couriers', domain: options.domain ?? null });
  const path = `/company/${owner.companyId}/logo`;
  await owner.client.get(path);
  return { ...owner, path };
}

async function logoHashOf(companyId: number): Promise<string | null> {
  const row = await cloud.ctx.db
    .selectFrom('companies')
    .select('logo_hash')
    .where('id', '=', companyId)
    .executeTakeFirstOrThrow();
  return row.logo_hash;
}

const png = (bytes: Buffer, filename = 'logo.png'): FilePart => ({ bytes, filename, type: 'image/png' });

describe('the logo page', () => {
  it('shows the initial and the rules until a logo is uploaded, then the logo, served for good', async () => {
    const owner = await logoOwner();
    const empty = await owner.client.get(owner.path);
    expect(empty.status).toBe(200);
    const words = visibleText(empty.html);
    expect(words).toContain('No logo yet: customers see the first letter of your name in its place.');
    expect(words).toContain('A PNG, JPEG or WebP file of at most 1 MiB');
    expect(words).toContain('Square: the sides may differ by at most 2 %');
    expect(words).toContain('customers see your name alone');
    expect(empty.html).toContain('accept="image/png,image/jpeg,image/webp"');
    expect(empty.html).toContain('enctype="multipart/form-data"');

    const sent = await postLogo(owner.client, owner.path, png(await pngLogo(600)));
    expect(sent.status).toBe(200);
    expect(visibleText(sent.html)).toContain('Logo saved.');
    const hash = await logoHashOf(owner.companyId);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(sent.html).toContain(`src="/logos/${hash}.webp"`);
    expect((await owner.client.get(owner.path)).html).toContain(`src="/logos/${hash}.webp"`);

    const served = await cloud.app.inject({ method: 'GET', url: `/logos/${hash}.webp` });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/webp');
    expect(served.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(served.headers['set-cookie']).toBeUndefined();
    const meta = await sharp(served.rawPayload).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 256, 256]);
  });

  it('[attack:web.logo-metadata] serves an upload carrying EXIF, ICC and XMP without any of them', async () => {
    const owner = await logoOwner();
    const sent = await postLogo(owner.client, owner.path, {
      bytes: await jpegWithMetadata(),
      filename: 'IMG_0001.JPG',
      type: 'image/jpeg',
    });
    expect(sent.status).toBe(200);
    const served = await cloud.app.inject({ url: `/logos/${await logoHashOf(owner.companyId)}.webp` });
    const meta = await sharp(served.rawPayload).metadata();
    expect([meta.exif, meta.icc, meta.xmp]).toEqual([undefined, undefined, undefined]);
    expect(served.rawPayload.toString('latin1')).not.toContain('secret');
  });

  it('replaces a logo, dropping the old image, and removes it; an image two companies share stays', async () => {
    const first = await logoOwner();
    const second = await logoOwner();
    const shared = await pngLogo(300);
    await postLogo(first.client, first.path, png(shared));
    await postLogo(second.client, second.path, png(shared));
    const sharedHash = await logoHashOf(first.companyId);
    expect(await logoHashOf(second.companyId)).toBe(sharedHash);

    await postLogo(first.client, first.path, png(await twoColourImage(300).negate().png().toBuffer()));
    const replaced = await logoHashOf(first.companyId);
    expect(replaced).not.toBe(sharedHash);
    expect((await cloud.app.inject({ url: `/logos/${sharedHash}.webp` })).statusCode).toBe(200);

    const removed = await first.client.post(`${first.path}/remove`);
    expect(removed.status).toBe(200);
    expect(visibleText(removed.html)).toContain('Logo removed');
    expect(await logoHashOf(first.companyId)).toBeNull();
    expect((await cloud.app.inject({ url: `/logos/${replaced}.webp` })).statusCode).toBe(404);
    await second.client.get(second.path);
    await second.client.post(`${second.path}/remove`);
    expect((await cloud.app.inject({ url: `/logos/${sharedHash}.webp` })).statusCode).toBe(404);
  });

  it('answers 404 for an unknown or malformed logo name', async () => {
    for (const name of [
      `${'0'.repeat(64)}.webp`,
      `${'a'.repeat(64)}.png`,
      'x.webp',
      `${'A'.repeat(64)}.webp`,
    ]) {
      expect((await cloud.app.inject({ url: `/logos/${name}` })).statusCode, name).toBe(404);
    }
    expect((await cloud.app.inject({ url: "/logos/'%20or%201=1--.webp" })).statusCode).toBe(404);
  });
});

describe('refused uploads, told beside the field', () => {
  async function refusedWith(file: FilePart | null, expected: string): Promise<void> {
    const owner = await logoOwner();
    const sent = await postLogo(owner.client, owner.path, file);
    expect(sent.status).toBe(400);
    expect(sent.html).toContain('<p class="field-error" id="logo-error">');
    expect(sent.html).toContain('aria-invalid="true"');
    expect(visibleText(sent.html)).toContain(expected);
    expect(await logoHashOf(owner.companyId)).toBeNull();
  }

  it('[attack:web.logo-svg] refuses an SVG, naming it', async () => {
    await refusedWith(
      { bytes: SVG_LOGO, filename: 'logo.svg', type: 'image/svg+xml' },
      'SVG logos are not accepted: export your logo as a square PNG',
    );
  });

  it('refuses a GIF and an animated WebP', async () => {
    const gif = await twoColourImage(64).gif().toBuffer();
    await refusedWith({ bytes: gif, filename: 'logo.gif', type: 'image/gif' }, 'GIF logos are not accepted');
    await refusedWith(
      { bytes: await animatedWebp(), filename: 'logo.webp', type: 'image/webp' },
      'Animated logos are not accepted',
    );
  });

  it('refuses a picture that is not square', async () => {
    await refusedWith(
      png(await twoColourImage(300, 200).png().toBuffer()),
      'The image is 300 × 200 pixels, not square.',
    );
  });

  it('[attack:web.logo-bomb] refuses a tiny PNG declaring 30000 × 30000 pixels', async () => {
    await refusedWith(png(decompressionBomb()), 'The image says it is 30000 × 30000 pixels');
  });

  it('[attack:web.logo-mismatch] refuses JPEG bytes named .png', async () => {
    await refusedWith(
      png(await twoColourImage(300).jpeg().toBuffer()),
      'The file holds a JPEG image, but its name ends in .png.',
    );
  });

  it('[attack:web.logo-oversized] refuses a file of 1 MiB and one byte on the page, not as an error page', async () => {
    const logo = await pngLogo(64);
    const big = Buffer.concat([logo, Buffer.alloc(1024 * 1024 + 1 - logo.length)]);
    expect(big.length).toBe(1_048_577);
    await refusedWith(png(big), 'The file is larger than 1 MiB.');
    const exact = Buffer.concat([logo, Buffer.alloc(1024 * 1024 - logo.length)]);
    const owner = await logoOwner();
    expect((await postLogo(owner.client, owner.path, png(exact))).status).toBe(200);
  });

  it('asks for a file when none was chosen, and refuses two files or extra fields', async () => {
    await refusedWith(null, 'Choose the image file of your logo, then upload it.');
    const logo = await pngLogo(64);
    const owner = await logoOwner();
    const two = await postLogo(owner.client, owner.path, png(logo), { files: [png(logo)] });
    expect(two.status).toBe(400);
    expect(visibleText(two.html)).toContain('Choose one image file and upload it again.');
    const fields = await postLogo(owner.client, owner.path, png(logo), {
      fields: { a: '1', b: '2', c: '3' },
    });
    expect(fields.status).toBe(400);
    expect(await logoHashOf(owner.companyId)).toBeNull();
  });

  it('[attack:web.logo-csrf] refuses an upload without the page token or from another site', async () => {
    const owner = await logoOwner();
    const logo = png(await pngLogo(64));
    const forged = await postLogo(owner.client, owner.path, logo, { fields: { _csrf: 'forged' } });
    expect(forged.status).toBe(403);
    const foreign = await postLogo(owner.client, owner.path, logo, {
      headers: { origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
    expect(await logoHashOf(owner.companyId)).toBeNull();
  });

  it('[attack:web.logo-flood] limits a company to 30 uploads an hour, said on the form', async () => {
    const owner = await logoOwner();
    for (let i = 0; i < LOGO_UPLOADS.max; i++) {
      expect((await postLogo(owner.client, owner.path, png(SVG_LOGO))).status).toBe(400);
    }
    const refused = await postLogo(owner.client, owner.path, png(await pngLogo(64)));
    expect(refused.status).toBe(429);
    expect(visibleText(refused.html)).toContain('Too many uploads in the last hour; try again in');
    expect(refused.headers['retry-after']).toBeDefined();
  });
});

describe('who may change it', () => {
  it("[attack:web.logo-other-company] a member of another company gets 404 for this company's logo page and upload", async () => {
    const owner = await logoOwner();
    const stranger = await logoOwner();
    const path = `/company/${owner.companyId}/logo`;
    expect((await stranger.client.get(path)).status).toBe(404);
    const upload = await postLogo(stranger.client, path, png(await pngLogo(64)));
    expect(upload.status).toBe(404);
    expect((await stranger.client.post(`${path}/remove`)).status).toBe(404);
    expect(await logoHashOf(owner.companyId)).toBeNull();
  });
});

describe('the logo customers see', () => {
  it('stands beside a verified domain on the request page, the consent form, the barrier and every journal line', async () => {
    const owner = await logoOwner({ domain: 'logo-couriers.example' });
    await cloud.ctx.db
      .updateTable('companies')
      .set({ key_pub: 'pinned-key-of-the-test' })
      .where('id', '=', owner.companyId)
      .execute();
    await approveDirectly(cloud, owner.companyId);
    const page = await owner.client.get(owner.path);
    expect(visibleText(page.html)).toContain('Customers see your company like this');
    await postLogo(owner.client, owner.path, png(await pngLogo(256)));
    const img = `<img class="logo" src="/logos/${await logoHashOf(owner.companyId)}.webp" alt width="56" height="56"`;

    const request = await cloud.ctx.db.transaction().execute((trx) =>
      createRequest(trx, {
        companyId: owner.companyId,
        ref: undefined,
        ttlHours: 24,
        now: cloud.ctx.clock.now(),
      }),
    );
    const customer = await signedInCustomer(cloud, 'Rita');
    const barrier = await journalBarrier(cloud.ctx, customer.id, 'Front gate');
    const shown = await customer.client.get(`/c/${request.code}`);
    expect(shown.html).toContain(img);
    expect(visibleText(shown.html)).toContain('Verified domain: logo-couriers.example');
    await customer.client.post(`/c/${request.code}/claim`);
    const consent = await customer.client.get(`/c/${request.code}`);
    expect(visibleText(consent.html)).toContain('Waiting for your answer');
    expect(consent.html).toContain(img);

    const holder = { companyId: owner.companyId, name: 'Logo Couriers', keyRef: 0 };
    holder.keyRef = await grantKey(cloud.ctx, {
      customerId: customer.id,
      barrier,
      companyId: owner.companyId,
    });
    await insertEntries(cloud.ctx, barrier, [{ holder }, { holder, outcome: 'revoked' }]);
    const small = img.replace('class="logo"', 'class="logo small"').replace(/"56"/g, '"32"');
    const journal = await customer.client.get(`/barriers/${barrier.deviceId}/journal`);
    const lines = journal.html.split('<li class="entry"').slice(1);
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toContain(small);
    expect((await customer.client.get(`/barriers/${barrier.deviceId}`)).html).toContain(small);
    const listed = await cloud.ops('GET', `/ops/journal?company=${owner.companyId}`);
    const entries = listed.body.entries as { company: { logo_url: string | null } }[];
    expect(entries.map((entry) => entry.company.logo_url)).toEqual([
      `${cloud.baseUrl}/logos/${await logoHashOf(owner.companyId)}.webp`,
      `${cloud.baseUrl}/logos/${await logoHashOf(owner.companyId)}.webp`,
    ]);
  });

  it('is not shown, nor its domain, while the key of a domain company is not pinned: the journal agrees with the pages', async () => {
    const owner = await logoOwner({ domain: 'unpinned-couriers.example' });
    await approveDirectly(cloud, owner.companyId);
    await postLogo(owner.client, owner.path, png(await pngLogo(256)));
    expect(await logoHashOf(owner.companyId)).not.toBeNull();
    const request = await cloud.ctx.db.transaction().execute((trx) =>
      createRequest(trx, {
        companyId: owner.companyId,
        ref: undefined,
        ttlHours: 24,
        now: cloud.ctx.clock.now(),
      }),
    );
    const customer = await signedInCustomer(cloud, 'Una');
    const shown = await customer.client.get(`/c/${request.code}`);
    expect(shown.html).not.toContain('/logos/');
    expect(visibleText(shown.html)).not.toContain('unpinned-couriers.example');

    const barrier = await journalBarrier(cloud.ctx, customer.id, 'Back gate');
    const holder = { companyId: owner.companyId, name: 'Logo Couriers', keyRef: 0 };
    holder.keyRef = await grantKey(cloud.ctx, {
      customerId: customer.id,
      barrier,
      companyId: owner.companyId,
    });
    await insertEntries(cloud.ctx, barrier, [{ holder }]);
    const journal = await customer.client.get(`/barriers/${barrier.deviceId}/journal`);
    expect(journal.html).not.toContain('/logos/');
    expect(visibleText(journal.html)).not.toContain('unpinned-couriers.example');
    const listed = await cloud.ops('GET', `/ops/journal?company=${owner.companyId}`);
    const entries = listed.body.entries as { company: { domain: string | null; logo_url: string | null } }[];
    expect(entries.map((entry) => entry.company)).toEqual([
      expect.objectContaining({ domain: null, logo_url: null }),
    ]);
  });

  it('is not shown for a company without a verified domain: its initial stands there', async () => {
    const owner = await logoOwner();
    await approveDirectly(cloud, owner.companyId);
    await postLogo(owner.client, owner.path, png(await pngLogo(256)));
    const request = await cloud.ctx.db.transaction().execute((trx) =>
      createRequest(trx, {
        companyId: owner.companyId,
        ref: undefined,
        ttlHours: 24,
        now: cloud.ctx.clock.now(),
      }),
    );
    const shown = await (await signedInCustomer(cloud, 'Sam')).client.get(`/c/${request.code}`);
    expect(shown.html).not.toContain('/logos/');
    expect(shown.html).toContain('<span class="logo" aria-hidden="true">L</span>');
  });
});
