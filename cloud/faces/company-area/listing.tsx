import type { VNode } from 'preact';
import { listHref } from './list-query.js';

/**
 * What a company's listing shows without rows (docs/design.md section 11.4): that the filters match nothing (with
 * the way back), that there is nothing older, or, on an empty first page, `none`.
 */
export function ListEmpty(props: {
  path: string;
  /** What is listed, singular and plural: "request", "requests". */
  item: string;
  items: string;
  filtered: boolean;
  before: number | undefined;
  none: string;
}): VNode {
  if (props.filtered) {
    return (
      <p>
        No {props.item} matches these filters. <a href={props.path}>Show every {props.item}</a>
      </p>
    );
  }
  return <p>{props.before !== undefined ? `There are no older ${props.items}.` : props.none}</p>;
}

/**
 * The links between pages of a company's listing (docs/design.md section 11.4): back to the newest, and on to
 * older ones, each keeping the filters. Nothing when everything fits on one page.
 */
export function ListPager(props: {
  path: string;
  filters: object;
  /** What is listed, plural: "requests", "openings". */
  items: string;
  before: number | undefined;
  older: number | null;
}): VNode | null {
  if (props.before === undefined && props.older === null) return null;
  const label = `${props.items[0]!.toUpperCase()}${props.items.slice(1)} pages`;
  return (
    <nav class="pager" aria-label={label}>
      {props.before !== undefined ? (
        <a href={listHref(props.path, props.filters)}>Newest {props.items}</a>
      ) : (
        <span />
      )}
      {props.older !== null ? (
        <a href={listHref(props.path, { ...props.filters, before: props.older })}>Older {props.items}</a>
      ) : null}
    </nav>
  );
}
