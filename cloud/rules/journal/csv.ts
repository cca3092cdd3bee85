/**
 * CSV as RFC 4180 writes it, made safe to open in a spreadsheet (docs/design.md section 10.5).
 *
 * Every text cell is quoted, a quote inside doubled, and lines end with CRLF, so a comma, a quote or a line
 * break in a company's text can never start another cell or row. A spreadsheet reads a cell that begins with
 * `=`, `+`, `-` or `@` as a formula, and `=HYPERLINK(...)` or a DDE call in an `actor` would run on the customer's
 * machine: such a cell gets a leading apostrophe, which spreadsheets show as text (OWASP, "CSV Injection"). The
 * same holds for a cell that begins with a tab, carriage return or line feed, or reaches one of those signs
 * after leading blanks, since some applications skip them; and for their full-width forms, which East Asian
 * input methods turn into the ASCII ones.
 */

/** Signs that make a spreadsheet read a cell as a formula, as the cell's first visible character. */
const FORMULA_START = /^\s*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20]|^[\t\r\n]/;

/** The text with a leading apostrophe when a spreadsheet would take it for a formula; otherwise unchanged. */
export function neutraliseFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/**
 * One cell: text is neutralised, then quoted; numbers are written as they are (ids, never negative); an
 * absent value is an empty cell.
 */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  return `"${neutraliseFormula(value).replaceAll('"', '""')}"`;
}

/** One record, CRLF-terminated (RFC 4180 section 2). */
export function csvLine(cells: readonly (string | number | null)[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/**
 * The UTF-8 byte order mark, first in the file: without it Excel reads a CSV in the machine's legacy code page
 * and garbles every name outside ASCII; LibreOffice, Numbers and CSV libraries that read UTF-8 skip it.
 */
export const UTF8_BOM = '\uFEFF';
