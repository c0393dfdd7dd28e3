/*
 * CSV formula injection (OWASP "CSV Injection"): a spreadsheet opening a CSV file runs a cell that begins with
 * `=`, `+`, `-` or `@` as a formula (and a leading tab or carriage return can hide one), so a model named
 * `=HYPERLINK("http://evil", "RB01")` would become a live link on a price manager's screen. Exports write such
 * a text cell with a `'` in front, which spreadsheets read as "this is text"; imports take that `'` off again, so
 * an exported file uploads back unchanged (a model `-RB01` stays `-RB01`). A text that itself begins with `'` gets
 * one more, so the rule is lossless both ways. Numbers are never touched: the database writes them, and `-4.00`
 * is a number to a spreadsheet, not a formula.
 */

/** What makes a spreadsheet read a cell as a formula, and the `'` that marks a neutralised cell. */
const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r'])
const TEXT_MARK = "'"

/** A text value as an exported cell: `'` in front when a spreadsheet would read it as a formula (or it starts with `'`). */
export function neutraliseFormula(text: string): string {
  const first = text.charAt(0)
  return FORMULA_START.has(first) || first === TEXT_MARK ? TEXT_MARK + text : text
}

/** The inverse of {@link neutraliseFormula}: an imported cell `'=…`, `'-…`, `''…` loses its first `'`. */
export function restoreFormula(cell: string): string {
  if (cell.charAt(0) !== TEXT_MARK) return cell
  const second = cell.charAt(1)
  return FORMULA_START.has(second) || second === TEXT_MARK ? cell.slice(1) : cell
}
