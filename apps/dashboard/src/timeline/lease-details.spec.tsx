import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { foldEvents } from '@lease-fence/dashboard-model';
import { LogBuilder } from '@lease-fence/dashboard-model/testing';
import { layoutLane } from './lane-layout.js';
import { RejectionDetails } from './lease-details.js';

/** The text a reader sees: tags dropped, React's text separators gone. */
const textOf = (html: string): string => html.replace(/<!-- -->/g, '').replace(/<[^>]+>/g, ' ');

describe('RejectionDetails', () => {
  // agent-a's stale writes: one refused and recorded at 12:00:20, one refused by the gate at 12:00:25
  // by its own clock and recorded at 12:00:50, when its outbox delivered it.
  const log = new LogBuilder({ ttlMillis: 10_000, wallMillis: Date.UTC(2026, 4, 28, 12, 0, 0) });
  log.started();
  log.granted('slot', 'agent-a', 1);
  log.advance(10_000).expired('slot', 'agent-a', 1);
  log.granted('slot', 'agent-b', 2);
  const stale = { holderId: 'agent-a', fence: 1 };
  const floor = { holderId: 'agent-b', fence: 2 };
  log
    .advance(10_000)
    .rejected('slot', stale, floor, { gateId: 'gate-7', gateWallMillis: Date.UTC(2026, 4, 28, 12, 0, 20) });
  log
    .advance(30_000)
    .rejected('slot', stale, floor, { gateId: 'gate-7', gateWallMillis: Date.UTC(2026, 4, 28, 12, 0, 25) });
  const lane = foldEvents(log.events).lanes.get('slot')!;
  const window = { fromWallMillis: Date.UTC(2026, 4, 28, 12, 0, 0), toWallMillis: Date.UTC(2026, 4, 28, 12, 1, 0) };

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
