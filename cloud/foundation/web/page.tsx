import type { FastifyReply } from 'fastify';
import type { ComponentChildren, VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { ReaderZone } from './readable-time.js';
import type { Session } from './sessions.js';

/**
 * The frame of every page (docs/design.md section 10): one stylesheet, first-party scripts loaded with
 * `defer` from our own origin, no inline script or style (the Content-Security-Policy forbids both), and the
 * manifest that makes the application installable. Templates are Preact components rendered to a string on
 * the server: props are type-checked and every text is escaped, so text a company wrote (an `actor`, a name)
 * can never become markup.
 */
export interface PageContext {
  /** The signed-in customer, or null. */
  readonly customer: Session | null;
  /** The CSRF token every form of the page carries. */
  readonly csrfToken: string;
  /** The reader may look and change nothing: the page shows no form that changes anything. */
  readonly lookOnly?: boolean;
}

/**
 * The zone the page's times are read in (docs/design.md section 10.1): the signed-in customer's, else UTC, as
 * for an account whose zone is not known yet.
 */
export function readerZone(page: Pick<PageContext, 'customer'>): string {
  return page.customer?.timeZone ?? 'UTC';
}

/** Where the pages' script proposes the browser's zone for an account that has none yet (app.js). */
const ZONE_PROPOSAL = '/account/time-zone';

export interface LayoutProps {
  title: string;
  page: PageContext;
  /** First-party scripts under /assets/, for pages whose forms they enhance. */
  scripts?: string[];
  children: ComponentChildren;
}

export function Layout(props: LayoutProps): VNode {
  const { customer } = props.page;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Gatelink`}</title>
        <meta name="theme-color" content="#1d4ed8" />
        <link rel="stylesheet" href="/assets/app.css" />
        <link rel="manifest" href="/manifest.webmanifest" />
        <link rel="icon" href="/assets/icon.svg" type="image/svg+xml" />
        <link rel="apple-touch-icon" href="/assets/icon-192.png" />
        <script src="/assets/app.js" defer />
        {(props.scripts ?? []).map((src) => (
          <script src={src} defer key={src} />
        ))}
      </head>
      <body data-propose-zone={customer && customer.timeZone === null ? ZONE_PROPOSAL : undefined}>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href="/">
            <img src="/assets/icon.svg" alt="" width="28" height="28" />
            Gatelink
          </a>
          {customer ? (
            <nav aria-label="Main">
              <a href="/barriers">Barriers</a>
              <a href="/account">Account</a>
              <form method="post" action="/signout" class="inline">
                <CsrfField page={props.page} />
                <button type="submit" class="link">
                  Sign out
                </button>
              </form>
            </nav>
          ) : null}
        </header>
        <main id="main">
          <ReaderZone.Provider value={readerZone(props.page)}>{props.children}</ReaderZone.Provider>
        </main>
      </body>
    </html>
  );
}

/** The hidden field that carries the page's CSRF token in a form. */
export function CsrfField(props: { page: PageContext }): VNode {
  return <input type="hidden" name="_csrf" value={props.page.csrfToken} />;
}

/** Sends a rendered page as HTML. */
export function sendPage(reply: FastifyReply, node: VNode, status = 200): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(`<!doctype html>${renderToString(node)}`);
}
