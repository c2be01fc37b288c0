import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { nextSort, tableWindow, VirtualTable, type TableColumn, type TableSort } from './virtual-table.js';

interface Item {
  readonly name: string;
  readonly size: number;
}

const COLUMNS: readonly TableColumn<Item, 'name' | 'size'>[] = [
  {
    key: 'name',
    label: 'name',
    title: 'the name',
    cell: (item) => item.name,
    compare: (a, b) => a.name.localeCompare(b.name),
  },
  {
    key: 'size',
    label: 'size',
    title: 'the size',
    cell: (item) => item.size,
    compare: (a, b) => a.size - b.size,
    firstDirection: 'descending',
  },
];

const items = (count: number): Item[] =>
  Array.from({ length: count }, (_, i) => ({ name: `item-${String(i).padStart(4, '0')}`, size: (i * 37) % count }));

function render(rows: readonly Item[], sort: TableSort<'name' | 'size' | 'other'>): string {
  return renderToString(
    <VirtualTable
      rows={rows}
      columns={COLUMNS}
      sort={sort}
      onSortChange={() => undefined}
      rowAttributes={(item) => ({ 'data-testid': 'item-row', 'data-name': item.name, 'data-size': item.size })}
      rowHeightPx={20}
      heightPx={100}
      tableTestId="items-table"
      sortTestIdPrefix="items-sort"
    />,
  );
}

const namesOf = (html: string): string[] => [...html.matchAll(/data-name="([^"]+)"/g)].map((m) => m[1] as string);
const sizesOf = (html: string): number[] => [...html.matchAll(/data-size="(\d+)"/g)].map((m) => Number(m[1]));

describe('VirtualTable', () => {
  it('gives a body its rows overflow its full height and strict containment, and a shorter one only a maximum', () => {
    // Arrange: 20 px rows in a 100 px body.
    const style = (html: string): string => /class="table-scroll" style="([^"]*)"/.exec(html)?.[1] ?? '';

    // Act
    const full = render(items(5), { key: 'name', direction: 'ascending' });
    const short = render(items(4), { key: 'name', direction: 'ascending' });

    // Assert
    expect(style(full)).toBe('height:100px;contain:strict');
    expect(style(short)).toBe('max-height:100px');
  });

  it('sorts by the column comparator both ways and marks that header with aria-sort and an arrow', () => {
    // Arrange
    const rows = items(5);

    // Act
    const up = render(rows, { key: 'size', direction: 'ascending' });
    const down = render(rows, { key: 'size', direction: 'descending' });

    // Assert
    expect(sizesOf(up)).toEqual([0, 1, 2, 3, 4]);
    expect(sizesOf(down)).toEqual([4, 3, 2, 1, 0]);
    expect(up).toMatch(/aria-sort="ascending"[^>]*><button[^>]*data-testid="items-sort-size"[^>]*>size<!-- --> ▲/);
    expect(down).toMatch(/aria-sort="descending"[^>]*><button[^>]*data-testid="items-sort-size"[^>]*>size<!-- --> ▼/);
    expect(up.match(/aria-sort="none"/g)).toHaveLength(1);
  });

  it('keeps the given order, marking no header, when the sort names no column', () => {
    const rows = items(5).reverse();
    const html = render(rows, { key: 'other', direction: 'descending' });
    expect(namesOf(html)).toEqual(rows.map((r) => r.name));
    expect(html.match(/aria-sort="none"/g)).toHaveLength(2);
  });

  it('renders only the window of rows at the top, with a bottom spacer as tall as the rest, and counts every row', () => {
    // Act: 1 000 rows of 20 px in a 100 px body: 5 in view plus 6 overscan.
    const html = render(items(1_000), { key: 'name', direction: 'ascending' });

    // Assert
    expect(namesOf(html)).toEqual(items(11).map((r) => r.name));
    expect(html).not.toContain('data-spacer="top"');
    expect(html).toMatch(/data-spacer="bottom" style="height:\s*19780px"/);
    expect(html).toContain('aria-rowcount="1001"');
  });

  it('cuts the window for a scroll offset, with spacers that keep the height of every row', () => {
    // 1 000 rows of 20 px, a 100 px body scrolled to 2 000 px: rows 100–104 in view, 6 overscan each side.
    expect(tableWindow(2_000, 100, 20, 1_000)).toEqual({
      first: 94,
      last: 111,
      topSpacerPx: 94 * 20,
      bottomSpacerPx: (1_000 - 111) * 20,
    });
    // Scrolled to the end: no bottom spacer.
    expect(tableWindow(19_900, 100, 20, 1_000)).toEqual({
      first: 989,
      last: 1_000,
      topSpacerPx: 989 * 20,
      bottomSpacerPx: 0,
    });
    // Fewer rows than fit: all of them, no spacer.
    expect(tableWindow(0, 100, 20, 3)).toEqual({ first: 0, last: 3, topSpacerPx: 0, bottomSpacerPx: 0 });
  });

  it('flips the direction on the sorted column and starts another column at its first direction', () => {
    const [name, size] = COLUMNS as [TableColumn<Item, 'name' | 'size'>, TableColumn<Item, 'name' | 'size'>];
    expect(nextSort({ key: 'name', direction: 'ascending' }, name)).toEqual({ key: 'name', direction: 'descending' });
    expect(nextSort({ key: 'name', direction: 'descending' }, name)).toEqual({ key: 'name', direction: 'ascending' });
    expect(nextSort({ key: 'name', direction: 'ascending' }, size)).toEqual({ key: 'size', direction: 'descending' });
    expect(nextSort({ key: 'size', direction: 'ascending' }, name)).toEqual({ key: 'name', direction: 'ascending' });
  });
});
