import { describe, expect, it } from 'vitest';
import { readDemoConfig } from './config.js';

const required = { LEASE_FENCE_URL: 'http://127.0.0.1:3000', LEASE_FENCE_TOKENS_FILE: 'data/tokens.json' };

describe('readDemoConfig', () => {
  it('gives the documented defaults: 4 agents, three deploy slots, 3 s leases, 0.5–6 s model calls', () => {
    // Act
    const config = readDemoConfig({ ...required, DEMO_SEED: '42' });

    // Assert
    expect(config).toEqual({
      coordinatorUrl: 'http://127.0.0.1:3000',
      tokensFile: 'data/tokens.json',
      dataDir: 'data/demo',
      agents: 4,
      resources: ['deploy-slot-a', 'deploy-slot-b', 'deploy-slot-c'],
      ttlMillis: 3000,
      clockSkewMillis: 100,
      modelCallMillis: { min: 500, max: 6000 },
      stallProbability: 0.3,
      lostReplyRate: 0.1,
      resourceRestartEveryMillis: 25_000,
      durationMillis: 0,
      seed: 42,
    });
  });

  it.each([
    [{ LEASE_FENCE_URL: '' }, /LEASE_FENCE_URL must be set/],
    [{ LEASE_FENCE_URL: 'nowhere' }, /LEASE_FENCE_URL must be an absolute URL, got "nowhere"/],
    [{ DEMO_AGENTS: '0' }, /DEMO_AGENTS must be a positive integer, got "0"/],
    [{ DEMO_TTL_MILLIS: '3s' }, /DEMO_TTL_MILLIS must be a positive integer \(milliseconds\), got "3s"/],
    [{ DEMO_CLOCK_SKEW_MILLIS: '3000' }, /DEMO_CLOCK_SKEW_MILLIS must be an integer in \[0, ttl 3000\)/],
    [{ DEMO_MODEL_CALL_MILLIS: '6000-500' }, /DEMO_MODEL_CALL_MILLIS must be min-max/],
    [{ DEMO_STALL_PROBABILITY: '1.5' }, /DEMO_STALL_PROBABILITY must be a probability in \[0, 1\], got "1.5"/],
  ])('refuses %j naming the variable and the value', (overrides, message) => {
    // Act / Assert
    expect(() => readDemoConfig({ ...required, ...overrides })).toThrow(message);
  });
});
