import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { lateRefusalLane } from '../testing/late-refusal-lane.js';
import { layoutLane } from './lane-layout.js';
import { RejectionDetails } from './lease-details.js';

/** The text a reader sees: tags dropped, React's text separators gone. */
const textOf = (html: string): string => html.replace(/<!-- -->/g, '').replace(/<[^>]+>/g, ' ');

describe('RejectionDetails', () => {
  // One refusal recorded at once (12:00:20), one gate-7 refused at 12:00:25 by its own clock and reported late.
  const { lane, window } = lateRefusalLane();

  it("says a refusal was reported late, with the gate's own time, and says nothing of it for one reported at once", () => {
    const [onTime, late] = layoutLane(lane, { window, widthPx: 600 }).rejections;

    const lateText = textOf(renderToString(<RejectionDetails cluster={late!} />));
    const onTimeText = textOf(renderToString(<RejectionDetails cluster={onTime!} />));

    expect(lateText).toMatch(/Reported late: gate gate-7 refused the write at 12:00:25\.000Z by its own clock/);
    expect(onTimeText).not.toMatch(/Reported late/);
  });

  it('counts the late ones of a cluster', () => {
    const [cluster] = layoutLane(lane, { window, widthPx: 6 }).rejections;

    const text = textOf(renderToString(<RejectionDetails cluster={cluster!} />));

    expect(cluster?.count).toBe(2);
    expect(text).toMatch(/1 of the 2 were reported late by their gate\./);
  });
});
