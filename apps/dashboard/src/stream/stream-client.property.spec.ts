import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FakeSocket, ManualTimers } from '../testing/fake-socket.js';
import { fcParameters, NO_WALL_CLOCK_TIMEOUT, LogBuilder } from '@lease-fence/dashboard-model/testing';
import { StreamClient } from './stream-client.js';

describe('StreamClient', () => {
  it(
    'delivers every position exactly once and in order across random drops, resends, pauses and resumes',
    () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 40 }),
          fc.array(
            fc.oneof(
              fc.record({
                kind: fc.constant('send' as const),
                count: fc.integer({ min: 1, max: 8 }),
                resendFrom: fc.nat({ max: 3 }),
              }),
              fc.record({ kind: fc.constant('drop' as const) }),
              fc.record({ kind: fc.constant('pause' as const) }),
              fc.record({ kind: fc.constant('resume' as const) }),
            ),
            { maxLength: 40 },
          ),
          (size, script) => {
            // Arrange: a server that, per connection, streams from `after + 1 - resendFrom`
            const log = new LogBuilder();
            for (let i = 1; i <= size; i += 1) log.granted(`r${i % 3}`, 'agent-a', i);
            const timers = new ManualTimers();
            const sockets: FakeSocket[] = [];
            const cursor = new Map<FakeSocket, number>();
            const delivered: number[] = [];
            const client = new StreamClient({
              url: (after) => `ws://h/v1/stream?after=${after}`,
              connect: (url) => {
                const s = new FakeSocket(url);
                sockets.push(s);
                return s;
              },
              timers,
              onEvent: (e) => delivered.push(e.position),
            });
            client.start();
            const live = (): FakeSocket | undefined => {
              const s = sockets[sockets.length - 1];
              if (s !== undefined && !cursor.has(s) && !s.closedByClient) {
                s.open();
                cursor.set(s, s.after);
              }
              return s?.closedByClient === true ? undefined : s;
            };

            // Act
            for (const step of script) {
              const s = live();
              if (step.kind === 'send' && s !== undefined) {
                const from = Math.max(0, (cursor.get(s) ?? 0) - step.resendFrom);
                const batch = log.events.slice(from, from + step.count + step.resendFrom);
                s.sendEvents(batch);
                cursor.set(s, from + batch.length);
              } else if (step.kind === 'drop' && s !== undefined) {
                s.serverClose(1006);
                timers.advance(10_000);
              } else if (step.kind === 'pause') client.hold();
              else if (step.kind === 'resume') client.release();
            }
            client.release();
            timers.advance(10_000);
            const s = live();
            if (s !== undefined) s.sendEvents(log.events.slice(cursor.get(s) ?? 0));

            // Assert
            expect(delivered).toEqual(log.events.map((e) => e.position));
          },
        ),
        fcParameters(300),
      );
    },
    NO_WALL_CLOCK_TIMEOUT,
  );
});
