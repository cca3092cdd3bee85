import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { CloudContext } from '../../foundation/context.js';
import { cookiePolicy } from '../../foundation/web/cookies.js';
import { ErrorPage } from '../../foundation/web/error-page.js';
import { Layout, type PageContext, sendPage } from '../../foundation/web/page.js';
import { securityHeaders } from '../../foundation/web/security-headers.js';
import { DIGEST_UNSUBSCRIBE_PATH } from '../../rules/mail-notifications/digest-mail.js';
import { emailChoiceOf, hasDigest, stopDigest, stopEmail } from '../../rules/notification-choices/choices.js';
import {
  readDigestToken,
  readUnsubscribeToken,
  type UnsubscribeTarget,
} from '../../rules/notification-choices/unsubscribe-token.js';

/**
 * The one-click unsubscribe of the e-mails of openings (docs/design.md section 10.7, RFC 8058). A mail client
 * posts `List-Unsubscribe=One-Click` to the link with no cookie, so these routes stand beside the pages, not
 * under them (cloud/web-pages.ts): no session, no CSRF token, no Origin check; the token in the path is the
 * authority, and it can only stop one person's e-mails of one barrier. A GET, which link checkers and
 * messengers make on their own, changes nothing and shows a button that posts. A token the cloud did not make
 * is 404 and changes nothing.
 */
export const UNSUBSCRIBE_PATH = '/notifications/unsubscribe';

/** Nobody is signed in on these pages: they carry no session and no CSRF token. */
const NOBODY: PageContext = { customer: null, csrfToken: '' };

/** A body the RFC's POST carries; the token is what counts, so only its size is bounded. */
const BODY_LIMIT = 1024;

export async function emailUnsubscribeRoutes(
  app: FastifyInstance,
  options: { ctx: CloudContext },
): Promise<void> {
  const { ctx } = options;
  await securityHeaders(app, cookiePolicy(ctx.baseUrl()).secure);
  app.addContentTypeParser(
    ['application/x-www-form-urlencoded', 'multipart/form-data'],
    { parseAs: 'string', bodyLimit: BODY_LIMIT },
    (_request, _body, done) => done(null, {}),
  );

  app.get(`${UNSUBSCRIBE_PATH}/:token`, async (request, reply) => {
    const target = await targetOf(ctx, request);
    if (!target) return notFound(request, reply);
    const choice = await emailChoiceOf(ctx.db, target);
    // The token was read whole, so the form posts to exactly this link, whatever the query added.
    const { token } = request.params as { token: string };
    return sendPage(reply, <UnsubscribePage action={`${UNSUBSCRIBE_PATH}/${token}`} choice={choice} />);
  });

  app.post(`${UNSUBSCRIBE_PATH}/:token`, async (request, reply) => {
    const target = await targetOf(ctx, request);
    if (!target) return notFound(request, reply);
    const stopped = await stopEmail(ctx.db, { ...target, now: ctx.clock.now() });
    return sendPage(reply, <StoppedPage barrier={stopped?.barrier ?? null} />);
  });

  // The daily digest's own link: it stops the digest of every barrier, as the one e-mail it is in.
  app.get(`${DIGEST_UNSUBSCRIBE_PATH}/:token`, async (request, reply) => {
    const { token } = request.params as { token: string };
    const customerId = await readDigestToken(ctx.db, token);
    if (customerId === null) return notFound(request, reply);
    const on = await hasDigest(ctx.db, customerId);
    return sendPage(reply, <DigestPage action={`${DIGEST_UNSUBSCRIBE_PATH}/${token}`} on={on} />);
  });

  app.post(`${DIGEST_UNSUBSCRIBE_PATH}/:token`, async (request, reply) => {
    const { token } = request.params as { token: string };
    const customerId = await readDigestToken(ctx.db, token);
    if (customerId === null) return notFound(request, reply);
    await stopDigest(ctx.db, { customerId, now: ctx.clock.now() });
    return sendPage(reply, <DigestPage action={null} on={false} />);
  });
}

async function targetOf(ctx: CloudContext, request: FastifyRequest): Promise<UnsubscribeTarget | null> {
  const { token } = request.params as { token: string };
  return readUnsubscribeToken(ctx.db, token);
}

function notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const message = 'This link is not one of ours: check that it was copied whole.';
  return sendPage(reply, ErrorPage({ page: NOBODY, status: 404, message, requestId: request.id }), 404);
}

function UnsubscribePage(props: {
  action: string;
  choice: { barrier: string; byEmail: boolean } | null;
}): VNode {
  const { choice } = props;
  return (
    <Layout title="E-mails of openings" page={NOBODY}>
      <section class="card">
        <h1>E-mails of openings</h1>
        {choice?.byEmail ? (
          <>
            <p>You are e-mailed of every opening of {choice.barrier} you asked to be told of.</p>
            <form method="post" action={props.action}>
              <p class="actions">
                <button type="submit">Stop these e-mails</button>
              </p>
            </form>
            <p class="hint">What you are told on your devices stays as it is.</p>
          </>
        ) : choice ? (
          <p>You get no e-mails of {choice.barrier}.</p>
        ) : (
          <NoLongerYours />
        )}
      </section>
    </Layout>
  );
}

function StoppedPage(props: { barrier: string | null }): VNode {
  return (
    <Layout title={props.barrier ? 'E-mails stopped' : 'Nothing to stop here'} page={NOBODY}>
      <section class="card">
        <h1>{props.barrier ? 'E-mails stopped' : 'Nothing to stop here'}</h1>
        {props.barrier ? (
          <p>
            You get no more e-mails of {props.barrier}. To have them again, choose an e-mail under “Also by
            e-mail” on the barrier's page.
          </p>
        ) : (
          <NoLongerYours />
        )}
        <p>
          <a href="/barriers">Your barriers</a>
        </p>
      </section>
    </Layout>
  );
}

/** The digest's page: a button that posts while a digest is on; what is so once it is off. */
function DigestPage(props: { action: string | null; on: boolean }): VNode {
  return (
    <Layout title="The daily e-mail" page={NOBODY}>
      <section class="card">
        <h1>The daily e-mail</h1>
        {props.on && props.action ? (
          <>
            <p>You get one e-mail a day of what happened at your barriers the day before.</p>
            <form method="post" action={props.action}>
              <p class="actions">
                <button type="submit">Stop the daily e-mail</button>
              </p>
            </form>
            <p class="hint">What you are told on your devices stays as it is.</p>
          </>
        ) : (
          <p>
            You get no daily e-mail of your barriers. To have it again, choose “One e-mail a day” on a
            barrier's page.
          </p>
        )}
        <p>
          <a href="/barriers">Your barriers</a>
        </p>
      </section>
    </Layout>
  );
}

/**
 * A genuine link whose person no longer stands on its barrier: they left, or the barrier changed hands, or its
 * controller was replaced (the barrier now has a new id, and its e-mails new links). Nothing is said to be
 * stopped that may not be.
 */
function NoLongerYours(): VNode {
  return (
    <p>
      This link is for a barrier you no longer share, or whose controller was replaced since the e-mail was
      sent. If e-mails still come, use the link in the newest one, or choose what you are told on the
      barrier's page.
    </p>
  );
}
