/**
 * Waits on the coordinator's WebSocket stream (catch-up, then live) until events of every wanted
 * type have been seen: synchronisation on the log itself, not on sleeps.
 */
import { StreamFrameSchema, type CoordinatorEventType } from '@lease-fence/protocol';
import WebSocket from 'ws';

/**
 * Resolves with the count of each event type once every type in `wanted` was seen.
 * @param withinMillis - Upper bound; rejects with the counts seen so far when it passes.
 */
export const waitForEventTypes = (
  url: string,
  viewerToken: string,
  wanted: readonly CoordinatorEventType[],
  withinMillis: number,
): Promise<Partial<Record<CoordinatorEventType, number>>> =>
  new Promise((resolve, reject) => {
    const counts: Partial<Record<CoordinatorEventType, number>> = {};
    const socket = new WebSocket(
      `${url.replace(/^http/, 'ws')}/v1/stream?after=0&token=${encodeURIComponent(viewerToken)}`,
    );
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`within ${withinMillis} ms saw ${JSON.stringify(counts)}, wanted each of ${wanted.join(', ')}`));
    }, withinMillis);
    socket.on('message', (data) => {
      const frame = StreamFrameSchema.safeParse(JSON.parse(String(data)));
      if (!frame.success || frame.data.type !== 'event') return;
      const type = frame.data.event.type;
      counts[type] = (counts[type] ?? 0) + 1;
      if (wanted.every((each) => (counts[each] ?? 0) > 0)) {
        clearTimeout(timer);
        socket.close();
        resolve(counts);
      }
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
