/**
 * Development only (`npm run dev`, then open `/?demo=<seed>`): a browser environment whose
 * "coordinator" is a synthetic log served through the real stream client and HTTP client, so the
 * dashboard can be tried and profiled at the scale target without a coordinator. Never shipped:
 * `main.tsx` imports it only when `import.meta.env.DEV`.
 */
import type { RecordedEvent, StreamFrame } from '@lease-fence/protocol';
import type { DashboardEnvironment } from '../app/environment.js';
import type { SocketLike } from '../stream/stream-client.js';
import { synthesizeEvents } from '@lease-fence/dashboard-model';

/**
 * Replaces the network of `env` with a synthetic coordinator: the first 90 % of a seeded log is
 * history, the rest arrives live at a steady rate.
 *
 * @param env - The browser environment.
 * @param seed - Seed of the synthetic log.
 * @param eventsPerSecond - Live rate after the catch-up. @defaultValue 200
 * @param historyFraction - Share of the log loaded as history at once, in (0, 1]; the rest arrives live
 *   (a benchmark that streams for a minute at 2 000 events/s needs a bigger live share). @defaultValue 0.9
 */
export function demoEnvironment(
  env: DashboardEnvironment,
  seed: number,
  eventsPerSecond = 200,
  historyFraction = 0.9,
): DashboardEnvironment {
  const all = synthesizeEvents({ seed });
  const shift = Date.now() - (all[Math.floor(all.length * historyFraction)]?.event.data.wallMillis ?? 0);
  const log: RecordedEvent[] = all.map((e) => {
    const data: Record<string, unknown> = { ...e.event.data, wallMillis: e.event.data.wallMillis + shift };
    if (typeof data['gateWallMillis'] === 'number') data['gateWallMillis'] += shift;
    return { ...e, recordedAtMillis: e.recordedAtMillis + shift, event: { ...e.event, data } } as RecordedEvent;
  });
  let head = Math.floor(log.length * historyFraction);
  const sockets = new Set<(upTo: number) => void>();
  window.setInterval(() => {
    const next = Math.min(log.length, head + Math.max(1, Math.round(eventsPerSecond / 10)));
    head = next;
    for (const push of sockets) push(head);
  }, 100);
  return {
    ...env,
    storage: { getItem: () => 'demo', setItem: () => undefined, removeItem: () => undefined },
    fetch: (url) => {
      const after = Number(new URL(url).searchParams.get('after') ?? 0);
      const body = { events: log.slice(after, Math.min(head, after + 1)), head };
      return Promise.resolve({ status: 200, ok: true, json: () => Promise.resolve(body) });
    },
    connect: (url) => {
      const socket: SocketLike = {
        onopen: null,
        onmessage: null,
        onclose: null,
        onerror: null,
        close: () => sockets.delete(push),
      };
      const query = new URL(url).searchParams;
      let sent = Number(query.get('after') ?? 0);
      // As the coordinator: with batch=1 the frames of one push are one message, else one message each.
      const batch = query.get('batch') === '1';
      const send = (frames: readonly StreamFrame[]): void => {
        if (batch && frames.length > 1) socket.onmessage?.({ data: JSON.stringify({ type: 'batch', frames }) });
        else for (const frame of frames) socket.onmessage?.({ data: JSON.stringify(frame) });
      };
      const push = (upTo: number): void => {
        const frames: StreamFrame[] = [];
        for (; sent < upTo; sent += 1) {
          const e = log[sent];
          if (e !== undefined)
            frames.push({ type: 'event', position: e.position, recordedAtMillis: e.recordedAtMillis, event: e.event });
        }
        frames.push({ type: 'heartbeat', position: upTo, wallMillis: Date.now() });
        send(frames);
      };
      window.setTimeout(() => {
        socket.onopen?.({});
        push(head);
        send([{ type: 'caught-up', position: head }]);
        sockets.add(push);
      }, 0);
      return socket;
    },
  };
}
