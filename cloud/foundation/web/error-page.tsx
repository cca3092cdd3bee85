import type { VNode } from 'preact';
import { Layout, type PageContext } from './page.js';

/** What a person sees when a page cannot be shown: the contract's sentence and the way on. */
export function ErrorPage(props: {
  page: PageContext;
  status: number;
  message: string;
  requestId: string;
}): VNode {
  const title = TITLES[props.status] ?? (props.status >= 500 ? 'Something went wrong' : 'That did not work');
  return (
    <Layout title={title} page={props.page}>
      <section class="card">
        <h1>{title}</h1>
        <p>{props.message}</p>
        {props.status >= 500 ? (
          <p class="muted">
            If it happens again, quote this reference: <code>{props.requestId}</code>
          </p>
        ) : null}
        <p>
          <a href="/">Go to the start page</a>
        </p>
      </section>
    </Layout>
  );
}

const TITLES: Record<number, string> = {
  403: 'Not allowed',
  404: 'Page not found',
  429: 'Slow down',
};
