import type { Page } from 'playwright-core';

/*
 * What a person sees go wrong in a page's layout, measured in the browser: what the browser suites check on
 * every page they look at, at a phone's size and a desktop's.
 */

/**
 * The innermost elements that reach past the window's right edge and how far, the tick boxes and radio
 * buttons drawn narrower than they are tall, and the time and date fields narrower than their own width;
 * each element as `tag#id.class[name][value]`.
 */
export function layoutProblems(
  page: Page,
): Promise<{ wider: string[]; squeezed: string[]; clipped: string[] }> {
  return page.evaluate(() => {
    const said = (element: Element) => {
      const id = element.id ? `#${element.id}` : '';
      const classes = Array.from(element.classList)
        .map((each) => `.${each}`)
        .join('');
      const name = element.getAttribute('name');
      const value = element.getAttribute('value');
      const attributes = `${name ? `[name=${name}]` : ''}${value ? `[value=${value}]` : ''}`;
      return `${element.tagName.toLowerCase()}${id}${classes}${attributes}`;
    };
    const edge = document.documentElement.clientWidth + 0.5;
    const past = (element: Element) => element.getBoundingClientRect().right > edge;
    const wider = Array.from(document.body.querySelectorAll('*'))
      .filter((element) => past(element) && !Array.from(element.children).some(past))
      .slice(0, 8)
      .map((element) => `${said(element)} to ${Math.round(element.getBoundingClientRect().right)}px`);
    const squeezed = Array.from(document.querySelectorAll('input[type="checkbox"], input[type="radio"]'))
      .map((input) => ({ input, box: input.getBoundingClientRect() }))
      .filter(({ box }) => box.height > 0 && box.width + 1 < box.height)
      .map(({ input, box }) => `${said(input)} ${Math.round(box.width)}x${Math.round(box.height)}px`);
    // A time or a date field narrower than it draws itself on its own cuts off what it shows ("08:00 AM").
    const clipped = Array.from(document.querySelectorAll('input[type="time"], input[type="date"]'))
      .filter((input) => input.getBoundingClientRect().width > 0)
      .flatMap((input) => {
        const natural = input.cloneNode() as HTMLInputElement;
        natural.removeAttribute('id');
        natural.style.cssText = 'position: absolute; visibility: hidden; width: auto; min-width: auto';
        document.body.append(natural);
        const needs = natural.getBoundingClientRect().width;
        natural.remove();
        const has = input.getBoundingClientRect().width;
        return has + 1 < needs ? [`${said(input)} ${Math.round(has)}px of ${Math.round(needs)}px`] : [];
      });
    return { wider, squeezed, clipped };
  });
}
