// The supervisor's policy (re-open, burning, takeover) is specified beside it, in
// libs/coordinator-core/src/supervisor/coordinator-supervisor.spec.ts. This spec covers the
// provider's wiring: configuration in, outcome counters, log lines and readiness out.
import { Writable } from 'node:stream';
import {
  createMemoryEventLog,
  EventLogUnavailableError,
  type EventLog,
  type MemoryEventLog,
} from '@lease-fence/coordinator-core';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, parseConfig } from '../config/config.js';
import { CoordinatorMetrics } from '../health/coordinator-metrics.js';
import { CoordinatorHost } from './coordinator-host.js';
import { OutcomeCounters } from './outcome-counters.js';

const baseConfig = parseConfig(
  { LEASE_FENCE_EVENT_LOG: 'memory' },
  { cwd: '/', defaultDashboardDir: '/none', hasIndexHtml: () => false },
);

const hosts: CoordinatorHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.beforeApplicationShutdown()));
});

/** A host on `log` with `config` over the defaults, and the messages it logged. */
function host(log: EventLog = createMemoryEventLog(), config: Partial<Config> = {}) {
  const counters = new OutcomeCounters();
  const lines: string[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push((JSON.parse(chunk.toString()) as { msg: string }).msg);
        done();
      },
    }),
  );
  const subject = new CoordinatorHost(log, { ...baseConfig, ...config }, logger, new CoordinatorMetrics(), counters);
  hosts.push(subject);
  return { host: subject, counters, messages: () => [...lines] };
}

/** Resolves once `subject`'s supervisor reaches a state of kind `kind`. */
const until = (subject: CoordinatorHost, kind: CoordinatorHost['state']['kind']): Promise<void> =>
  subject.state.kind === kind
    ? Promise.resolve()
    : new Promise((resolve) => {
        const stop = subject.onStateChange((state) => {
          if (state.kind !== kind) return;
          stop();
          resolve();
        });
      });

describe('CoordinatorHost', () => {
  it("counts outcomes for the stream's stats frames, denials by reason", async () => {
    const { host: subject, counters } = host();
    await subject.recovered();
    await subject.current().acquire({ resource: 'r', holderId: 'a', requestId: 'q1' });
    await subject.current().acquire({ resource: 'r', holderId: 'b', requestId: 'q2' });
    expect(counters.totals()).toMatchObject({ grants: 1, denials: { held: 1 } });
  });

  it('logs each step of a failed append and the re-open that follows', async () => {
    // Given a coordinator whose next append fails, with the first wait shortened to 1–2 ms
    const log: MemoryEventLog = createMemoryEventLog();
    const { host: subject, messages } = host(log, { reopenInitialDelayMillis: 2, reopenMaxDelayMillis: 2 });
    await subject.recovered();
    log.failNextAppend(new EventLogUnavailableError('memory', { message: 'disk I/O error' }));

    // When a grant's append fails and the supervisor re-opens on the same log
    await subject
      .current()
      .acquire({ resource: 'slot-1', holderId: 'agent-a', requestId: 'a-1' })
      .catch(() => undefined);
    await until(subject, 'ready');

    // Then every transition was logged
    expect(messages()).toEqual(
      expect.arrayContaining([
        'coordinator unhealthy: it no longer grants; it is re-opened once the event log answers',
        expect.stringMatching(/^event log unavailable: next attempt in [12] ms$/),
        'event log answers again: re-opening the coordinator',
        'coordinator re-opened',
      ]),
    );
  });

  it('reports a standby on /readyz as not ready with status standby, and refuses commands as standby', () => {
    // Given a standby (the configuration refuses a memory log for one; the provider takes any)
    const { host: subject, messages } = host(createMemoryEventLog(), {
      role: 'standby',
      takeoverAfterMillis: 60_000,
      heartbeat: true,
    });

    // When it starts following
    void subject.recovered();

    // Then
    expect(subject.readiness()).toMatchObject({
      ready: false,
      status: 'standby',
      reason: expect.stringMatching(/^standby: following the log/),
    });
    expect(() => subject.current()).toThrow(
      expect.objectContaining({ code: 'coordinator-unavailable', reason: 'standby' }),
    );
    expect(messages()).toContain('standby: following the log; commands are refused until it takes over');
  });
});
