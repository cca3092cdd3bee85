import type { ComponentChildren, FormHTMLAttributes, VNode } from 'preact';
import { CsrfField, type PageContext } from './page.js';

/**
 * A form that changes something (POST, with the page's CSRF token), left out of the page for a reader who may
 * only look (`page.lookOnly`: a company's viewer, docs/design.md section 11.1), who could not send it: the
 * server refuses it anyway, so a page without it says the same thing sooner.
 */
export function ChangeForm(
  props: { page: PageContext; children: ComponentChildren } & Omit<
    FormHTMLAttributes<HTMLFormElement>,
    'method'
  >,
): VNode | null {
  const { page, children, ...form } = props;
  if (page.lookOnly) return null;
  return (
    <form method="post" {...form}>
      <CsrfField page={page} />
      {children}
    </form>
  );
}
