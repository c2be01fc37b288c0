import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { synthesizeEvents, filterLanes, foldEvents } from '@lease-fence/dashboard-model';
import { TimelineView } from './timeline-view.js';

describe('TimelineView', () => {
  it('renders one canvas and an accessible mirror of only the lanes in view (virtualised)', () => {
    // Arrange: 500 lanes
    const state = foldEvents(
      synthesizeEvents({ seed: 3, resources: 500, generations: 1_500, rejections: 100, restarts: 1 }),
    );
    const { lanes } = filterLanes(state, {});
    const starts = lanes.flatMap((l) => l.generations.map((g) => g.startWallMillis));
    const window = { fromWallMillis: Math.min(...starts), toWallMillis: Math.max(...starts) };
    const noop = (): void => undefined;

    // Act
    const html = renderToString(
      <TimelineView
        state={state}
        lanes={lanes}
        resolveWindow={() => window}
        animate={false}
        nowWallMillis={undefined}
        asOfWallMillis={undefined}
        cursorWallMillis={undefined}
        selectedResource={undefined}
        heightPx={246}
        onZoom={noop}
        onPan={noop}
        onPick={noop}
        onSelectRejection={noop}
      />,
    );

    // Assert: (246 - 26) / 22 = 10 rows in view, plus 3 rows of overscan below
    expect(html.split('data-testid="lanes-canvas"').length - 1).toBe(1);
    expect(html.split('data-testid="lane-row"').length - 1).toBe(13);
    expect(html).toContain(`data-resource="${lanes[0]!.resource}"`);
    expect(html).toContain('data-lanes="500"');
  });
});
