import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GATE_CONFIG_HELP, GATE_CONFIG_VARIABLES, GateConfigError, parseGateConfig } from './config.js';

const REQUIRED = {
  LEASE_FENCE_GATE_RESOURCE: 'deploy-slot',
  LEASE_FENCE_GATE_UPSTREAM: 'http://127.0.0.1:8080',
  LEASE_FENCE_COORDINATOR_URL: 'http://127.0.0.1:3000',
  LEASE_FENCE_GATE_TOKEN: 'gate-secret',
};

const issuesOf = (env: Record<string, string | undefined>): { variable: string; message: string }[] => {
  try {
    parseGateConfig(env, '/srv');
  } catch (error) {
    if (error instanceof GateConfigError) return [...error.issues];
    throw error;
  }
  return [];
};

describe('parseGateConfig', () => {
  it('applies the defaults the help text documents', () => {
    const config = parseGateConfig(REQUIRED, '/srv');

    expect(config).toMatchObject({
      resource: 'deploy-slot',
      port: 3100,
      host: '127.0.0.1',
      dataDir: '/srv/data',
      namespace: 'default',
      upstreamTimeoutMillis: 30_000,
      linkPingMillis: 5_000,
    });
    expect(config.upstream.origin).toBe('http://127.0.0.1:8080');
    expect([...config.openMethods]).toEqual(['GET', 'HEAD', 'OPTIONS']);
  });

  it('reads every variable it documents in --help', () => {
    for (const variable of GATE_CONFIG_VARIABLES) expect(GATE_CONFIG_HELP).toContain(variable);
  });

  it('names every missing required variable at once', () => {
    expect(issuesOf({}).map((issue) => issue.variable)).toEqual([
      'LEASE_FENCE_GATE_RESOURCE',
      'LEASE_FENCE_GATE_UPSTREAM',
      'LEASE_FENCE_COORDINATOR_URL',
      'LEASE_FENCE_GATE_TOKEN',
    ]);
  });

  it.each([
    ['LEASE_FENCE_GATE_UPSTREAM', 'http://127.0.0.1:8080/api', 'without a path'],
    ['LEASE_FENCE_GATE_UPSTREAM', 'ftp://127.0.0.1', 'http(s)'],
    ['LEASE_FENCE_GATE_UPSTREAM', 'http://user:pw@127.0.0.1', 'credentials'],
    ['LEASE_FENCE_COORDINATOR_URL', 'http://user:pw@127.0.0.1:3000', 'must not carry credentials (user:password@)'],
    ['LEASE_FENCE_COORDINATOR_URL', 'not a url', 'http(s) URL'],
    ['LEASE_FENCE_COORDINATOR_URL', 'http://127.0.0.1:3000/?x=1', 'no query (?…) or fragment (#…)'],
    ['LEASE_FENCE_COORDINATOR_URL', 'http://127.0.0.1:3000#top', 'no query (?…) or fragment (#…)'],
    ['PORT', '70000', 'TCP port'],
    ['PORT', '-1', 'TCP port'],
    ['LEASE_FENCE_GATE_RESOURCE', 'déploy', 'printable ASCII'],
    ['LEASE_FENCE_GATE_OPEN_METHODS', 'GET,NOT A METHOD', 'HTTP methods'],
    ['LEASE_FENCE_GATE_UPSTREAM_TIMEOUT_MILLIS', '0', 'milliseconds'],
    ['LEASE_FENCE_GATE_LINK_PING_MILLIS', '50', 'milliseconds'],
    ['LEASE_FENCE_NAMESPACE', 'a b', 'letters'],
    ['LOG_LEVEL', 'loud', 'one of'],
  ])('refuses %s=%j naming the variable', (variable, value, expected) => {
    const issues = issuesOf({ ...REQUIRED, [variable]: value });

    expect(issues).toEqual([{ variable, message: expect.stringContaining(expected) }]);
  });

  it('takes an empty LEASE_FENCE_GATE_OPEN_METHODS as "every method needs a token", and upper-cases methods', () => {
    expect([...parseGateConfig({ ...REQUIRED, LEASE_FENCE_GATE_OPEN_METHODS: '' }, '/srv').openMethods]).toEqual([]);
    expect([
      ...parseGateConfig({ ...REQUIRED, LEASE_FENCE_GATE_OPEN_METHODS: 'get, propfind' }, '/srv').openMethods,
    ]).toEqual(['GET', 'PROPFIND']);
  });
});

describe('apps/gate/README.md', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

  it('lists exactly the variables the gate reads, in its configuration table', () => {
    const table = readme.slice(readme.indexOf('## Configuration'));
    const listed = [...table.matchAll(/^\| `([A-Z_]+)`\s*\|/gm)].map((match) => match[1]);

    expect(listed).toEqual(GATE_CONFIG_VARIABLES);
  });

  it('configures its example with known variables only, every required one included', () => {
    const exported = [...readme.matchAll(/^export ([A-Z_]+)=(.*)$/gm)];
    const env = Object.fromEntries(exported.map(([, name, value]) => [name!, value!]));

    expect(Object.keys(env).filter((name) => !GATE_CONFIG_VARIABLES.includes(name))).toEqual([]);
    expect(() => parseGateConfig(env, '/srv')).not.toThrow();
  });
});
