import { CoordinatorUnavailableError, EventLogUnavailableError } from '@lease-fence/coordinator-core';
import { createMemoryEventLog } from '@lease-fence/event-log-memory';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/config.js';
import { CoordinatorMetrics } from '../health/coordinator-metrics.js';
import { CoordinatorHost } from './coordinator-host.js';
import { OutcomeCounters } from './outcome-counters.js';

const config = parseConfig({ LEASE_FENCE_EVENT_LOG: 'memory' }, { cwd: '/', defaultDashboardDir: '/none', hasIndexHtml: () => false });
const logger = pino({ level: 'silent' });

function host(log = createMemoryEventLog()) {
  const counters = new OutcomeCounters();
  return { host: new CoordinatorHost(log, config, logger, new CoordinatorMetrics(), counters), counters, log };
}

describe('CoordinatorHost', () => {
  it('is not ready and refuses commands as recovering before recovery has run', () => {
    // Arrange
    const { host: subject } = host();

    // Act
    const readiness = subject.readiness();

    // Assert
    expect(readiness).toMatchObject({ ready: false, status: 'recovering' });
    expect(() => subject.current()).toThrow(CoordinatorUnavailableError);
    expect(() => subject.current()).toThrow(expect.objectContaining({ reason: 'recovering' }));
  });

  it('is ready once recovery has finished, with the boot id as the clock domain of its grants', async () => {
    // Arrange
    const { host: subject } = host();

    // Act
    const recovered = await subject.recovered();
    const outcome = await subject.current().acquire({ resource: 'r', holderId: 'a', requestId: 'q' });

    // Assert
    expect(recovered.ok).toBe(true);
    expect(subject.readiness()).toMatchObject({ ready: true, status: 'ready', bootId: subject.bootId, position: 2 });
    expect(outcome.ok && outcome.grant.coordinatorExpiresAt.domain).toBe(subject.bootId);
  });

  it('counts outcomes for the stream\'s stats frames, denials by reason', async () => {
    const { host: subject, counters } = host();
    await subject.recovered();
    await subject.current().acquire({ resource: 'r', holderId: 'a', requestId: 'q1' });
    await subject.current().acquire({ resource: 'r', holderId: 'b', requestId: 'q2' });
    expect(counters.totals()).toMatchObject({ grants: 1, denials: { held: 1 } });
  });

  it('reports a failed recovery as not ready with the cause, and refuses commands as unhealthy', async () => {
    // Arrange: a log that fails when recovery appends CoordinatorStarted
    const log = createMemoryEventLog();
    log.failNextAppend(new EventLogUnavailableError('memory', { message: 'disk full' }));
    const { host: subject } = host(log);

    // Act
    const recovered = await subject.recovered();

    // Assert
    expect(recovered.ok).toBe(false);
    expect(subject.readiness()).toMatchObject({ ready: false, status: 'failed', reason: expect.stringContaining('disk full') });
    expect(() => subject.current()).toThrow(expect.objectContaining({ reason: 'unhealthy' }));
  });

  it('is superseded, not ready, when another coordinator appends to its log', async () => {
    // Arrange
    const { host: subject, log } = host();
    await subject.recovered();
    const { host: successor } = host(createMemoryEventLog({ storage: log.storage }));
    await successor.recovered();

    // Act
    const refused = subject.current().acquire({ resource: 'r', holderId: 'a', requestId: 'q' });

    // Assert
    await expect(refused).rejects.toMatchObject({ reason: 'superseded' });
    expect(subject.readiness()).toMatchObject({ ready: false, status: 'superseded', reason: expect.stringContaining('another coordinator') });
  });

  it('closes the coordinator before shutdown, after which it is not ready', async () => {
    const { host: subject } = host();
    await subject.recovered();
    await subject.beforeApplicationShutdown();
    expect(subject.readiness()).toMatchObject({ ready: false, status: 'closed' });
  });
});
