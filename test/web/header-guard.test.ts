import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerErrorHandling } from '../../cloud/foundation/http/errors.js';

/**
 * The last guard behind every check of input that goes into a header (cloud/foundation/http/errors.ts): a value
 * Node refuses to send (ERR_INVALID_CHAR) is a 400 `bad_request` in the contract's shape, never a 500.
 */
describe('[attack:web.next-header-injection] a header value Node refuses', () => {
  const app = Fastify();
  beforeAll(async () => {
    registerErrorHandling(app);
    app.get('/redirect', async (request, reply) =>
      reply.redirect(`/barriers${(request.query as { to: string }).to}`, 303),
    );
    app.get('/header', async (request, reply) =>
      reply.header('x-shown', (request.query as { value: string }).value).send('shown'),
    );
    await app.ready();
  });
  afterAll(() => app.close());

  it.each([
    ['/redirect?to=%0D%0ASet-Cookie:%20x=1', 'CR LF in a Location'],
    ['/redirect?to=%E2%80%A8', 'a character outside Latin-1 in a Location'],
    ['/header?value=a%0Ab', 'LF in another header'],
    ['/header?value=%00', 'NUL in another header'],
  ])('%s (%s) is answered 400 bad_request', async (url) => {
    const answer = await app.inject(url);
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toMatchObject({ error: 'bad_request', message: expect.any(String) });
    expect(answer.headers.location).toBeUndefined();
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(answer.headers['x-request-id']).toEqual(expect.any(String));
  });

  it('still sends a header value Node takes', async () => {
    const answer = await app.inject('/redirect?to=%2Fabc');
    expect(answer.statusCode).toBe(303);
    expect(answer.headers.location).toBe('/barriers/abc');
  });
});
