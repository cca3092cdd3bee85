import type { ComponentChildren, VNode } from 'preact';
import { CsrfField, Layout, type PageContext } from '../../foundation/web/page.js';
import type { ConsoleOperator } from './console-access.js';

/**
 * The frame of the console's pages (docs/design.md section 11.5): its own heading, who is signed in, and its
 * sections. A console signed in with the token signs out here; an operator account signs out as an account.
 */
export type ConsoleSection = 'companies' | 'controllers' | 'rollouts' | 'operators';

const SECTIONS: { id: ConsoleSection; label: string; path: string }[] = [
  { id: 'companies', label: 'Companies', path: '/console' },
  { id: 'controllers', label: 'Controllers', path: '/console/controllers' },
  { id: 'rollouts', label: 'Rollouts', path: '/console/rollouts' },
  { id: 'operators', label: 'Operators', path: '/console/operators' },
];

export function ConsoleFrame(props: {
  page: PageContext;
  operator: ConsoleOperator;
  section: ConsoleSection;
  title: string;
  children: ComponentChildren;
}): VNode {
  return (
    <Layout title={`${props.title} · Operator console`} page={props.page}>
      <div class="company-head">
        {/* A div, not a p: a form may not sit inside a paragraph, and the parser would close it there. */}
        <div class="crumbs muted small">
          Signed in as {props.operator.name}
          {props.operator.viaToken ? (
            <>
              {' · '}
              <form method="post" action="/console/signout" class="inline">
                <CsrfField page={props.page} />
                <button type="submit" class="link">
                  Sign out of the console
                </button>
              </form>
            </>
          ) : null}
        </div>
        <h1 class="company-name">Operator console</h1>
      </div>
      <nav class="tabs" aria-label="Console">
        {SECTIONS.map((entry) => (
          <a
            key={entry.id}
            class="tab"
            href={entry.path}
            aria-current={entry.id === props.section ? 'page' : undefined}
          >
            {entry.label}
          </a>
        ))}
      </nav>
      {props.children}
    </Layout>
  );
}
