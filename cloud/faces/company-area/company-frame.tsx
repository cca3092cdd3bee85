import type { ComponentChildren, VNode } from 'preact';
import { ErrorSummary } from '../../foundation/web/field-errors.js';
import type { FieldErrors } from '../../foundation/web/form-input.js';
import { Layout, type PageContext } from '../../foundation/web/page.js';
import type { Company } from '../../rules/companies/companies.js';
import { ROLE_WORDS } from './role-words.js';

/**
 * The frame of a company's pages (docs/design.md section 11): the company's name and state, and the area's
 * sections. Each section is a page of its own, so every one works without scripts and has its own address.
 */
export type CompanySection =
  | 'overview'
  | 'access'
  | 'logo'
  | 'callback'
  | 'events'
  | 'members'
  | 'requests'
  | 'journal'
  | 'sandbox'
  | 'activity';

const SECTIONS: { id: CompanySection; label: string; path: string }[] = [
  { id: 'overview', label: 'Overview', path: '' },
  { id: 'access', label: 'API access', path: '/access' },
  { id: 'requests', label: 'Requests', path: '/requests' },
  { id: 'journal', label: 'Openings', path: '/journal' },
  { id: 'logo', label: 'Logo', path: '/logo' },
  { id: 'callback', label: 'Callback', path: '/callback' },
  { id: 'events', label: 'Events', path: '/events' },
  { id: 'members', label: 'Members', path: '/members' },
  { id: 'sandbox', label: 'Sandbox', path: '/sandbox' },
  { id: 'activity', label: 'Activity', path: '/activity' },
];

export const STATUS_WORDS: Record<Company['status'], { text: string; tone: 'ok' | 'bad' | 'wait' }> = {
  pending: { text: 'Waiting for approval', tone: 'wait' },
  approved: { text: 'Approved', tone: 'ok' },
  rejected: { text: 'Not approved', tone: 'bad' },
  suspended: { text: 'Suspended', tone: 'bad' },
};

export function companyPath(company: { id: number }, section: CompanySection = 'overview'): string {
  return `/company/${company.id}${SECTIONS.find((entry) => entry.id === section)?.path ?? ''}`;
}

export function CompanyFrame(props: {
  page: PageContext;
  company: Company;
  section: CompanySection;
  title: string;
  scripts?: string[];
  /** What the last form did, said at the top. */
  notice?: string | undefined;
  /** The last form's problems: a summary at the top, each linking to its field. */
  errors?: FieldErrors | undefined;
  children: ComponentChildren;
}): VNode {
  const { company } = props;
  const status = STATUS_WORDS[company.status];
  return (
    <Layout title={`${props.title} · ${company.name}`} page={props.page} scripts={props.scripts}>
      <div class="company-head">
        <p class="crumbs muted small">
          <a href="/company">Your companies</a>
        </p>
        <h1 class="company-name">{company.name}</h1>
        <span class={`badge ${status.tone}`}>{status.text}</span>
      </div>
      <nav class="tabs" aria-label="Company">
        {SECTIONS.map((entry) => (
          <a
            key={entry.id}
            class="tab"
            href={companyPath(company, entry.id)}
            aria-current={entry.id === props.section ? 'page' : undefined}
          >
            {entry.label}
          </a>
        ))}
      </nav>
      <h2 class="section-title">{props.title}</h2>
      {props.page.lookOnly ? (
        <p class="notice">
          You are a viewer: you may {ROLE_WORDS.viewer.may}. The company's owner can make you a developer.
        </p>
      ) : null}
      {props.notice ? (
        <div class="notice ok" role="status">
          {props.notice}
        </div>
      ) : null}
      <ErrorSummary errors={props.errors} />
      {props.children}
    </Layout>
  );
}
