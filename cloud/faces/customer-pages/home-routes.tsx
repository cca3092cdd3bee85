import type { FastifyInstance } from 'fastify';
import { Layout, sendPage } from '../../foundation/web/page.js';
import { pageContext, type WebDeps } from '../../foundation/web/web-deps.js';

/** `/`: a signed-in customer goes to their barriers; anyone else learns what Gatelink is and signs in. */
export async function homeRoutes(app: FastifyInstance, _deps: WebDeps): Promise<void> {
  app.get('/', async (request, reply) => {
    if (request.customer) return reply.redirect('/barriers', 303);
    const page = pageContext(request, reply);
    return sendPage(
      reply,
      <Layout title="Open your gate to the companies you choose" page={page}>
        <section class="card hero">
          <h1>Your gate, your say</h1>
          <p>
            Let a courier, a cleaner or a builder open your barrier while you are away. You choose who, which
            gate and for how long, you see every opening, and you can withdraw access at any moment.
          </p>
          <p class="actions">
            <a class="button" href="/signup">
              Create an account
            </a>
            <a class="button secondary" href="/signin">
              Sign in
            </a>
          </p>
        </section>
        <section class="card">
          <h2>For companies</h2>
          <p>
            Open your customers' gates through our API, with their consent and a journal of every opening.{' '}
            <a href="/company/new">Register your company</a>, or <a href="/company">sign in to its account</a>
            .
          </p>
        </section>
      </Layout>,
    );
  });
}
