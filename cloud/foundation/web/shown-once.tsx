import type { ComponentChildren, VNode } from 'preact';

/**
 * A secret on the one answer that shows it (docs/design.md section 11.2): in a read-only field, so that a tap
 * or a click selects it whole and the system's copy works without our script, wrapping at 360 px rather than
 * running off the screen; with the script, a Copy button beside it (assets/app.js, `data-copy`).
 */
export function ShownOnce(props: {
  id: string;
  title: string;
  label: string;
  secret: string;
  /** The heading's level where it stands: a page's own section (h2) or a card's (h3). */
  heading?: 'h2' | 'h3';
  /** Lines of the field: enough that the whole of it shows at 360 px (a command wraps more than a secret). */
  rows?: number;
  children: ComponentChildren;
}): VNode {
  const Heading = props.heading ?? 'h2';
  return (
    <section class="notice ok" aria-labelledby={`${props.id}-title`} role="status">
      <Heading id={`${props.id}-title`}>{props.title}</Heading>
      <label for={props.id}>{props.label}</label>
      <textarea
        id={props.id}
        class="secret"
        rows={props.rows ?? 2}
        readonly
        spellcheck={false}
        autocomplete="off"
        autocapitalize="off"
      >
        {props.secret}
      </textarea>
      <p class="actions">
        <button type="button" class="secondary" data-copy={props.id} hidden>
          Copy
        </button>
      </p>
      {props.children}
    </section>
  );
}
