/**
 * Plain-text tables for people (`--json` is for scripts). Hand-written rather than a table
 * library: left-aligned columns padded to the widest cell are all the output needs, with no
 * borders or colours to strip when the output is piped.
 */

/**
 * Renders `rows` under `headers`, columns separated by two spaces, one line per row.
 * @returns The table's lines joined, ending with a newline; just the header line when `rows` is empty.
 */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}
