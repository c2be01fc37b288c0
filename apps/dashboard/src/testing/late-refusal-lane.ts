/**
 * Test fixture (not shipped): one lane with two refusals of agent-a's stale writes, one reported
 * at once and one its gate reported late. agent-a's lease (fence 1) expires at 12:00:10 and
 * agent-b takes fence 2; gate-7 refuses a write at 12:00:20, recorded then, and another at
 * 12:00:25 by its own clock while the coordinator is down, recorded at 12:00:50 when its outbox
 * delivered it. Both refusals are inside `window` (12:00:00–12:01:00 UTC, 2026-05-28).
 */
import { foldEvents, type Lane } from '@lease-fence/dashboard-model';
import { LogBuilder } from '@lease-fence/dashboard-model/testing';
import type { TimeWindow } from '../timeline/time-scale.js';

/** The lane `slot` and a window that holds both refusals. */
export function lateRefusalLane(): { readonly lane: Lane; readonly window: TimeWindow } {
  const at = (seconds: number): number => Date.UTC(2026, 4, 28, 12, 0, seconds);
  const log = new LogBuilder({ ttlMillis: 10_000, wallMillis: at(0) });
  log.started();
  log.granted('slot', 'agent-a', 1);
  log.advance(10_000).expired('slot', 'agent-a', 1);
  log.granted('slot', 'agent-b', 2);
  const stale = { holderId: 'agent-a', fence: 1 };
  const floor = { holderId: 'agent-b', fence: 2 };
  log.advance(10_000).rejected('slot', stale, floor, { gateId: 'gate-7', gateWallMillis: at(20) });
  log.advance(30_000).rejected('slot', stale, floor, { gateId: 'gate-7', gateWallMillis: at(25) });
  const lane = foldEvents(log.events).lanes.get('slot') as Lane;
  return { lane, window: { fromWallMillis: at(0), toWallMillis: at(60) } };
}
