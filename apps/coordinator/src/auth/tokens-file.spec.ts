import { describe, expect, it } from 'vitest';
import { ForbiddenError, UnauthenticatedError } from './auth.errors.js';
import { authorize } from './authorize.js';
import { parseTokensFile, TokensFileError } from './tokens-file.js';

const FILE = '/etc/lease-fence/tokens.json';

const problemsOf = (text: string): readonly string[] => {
  try {
    parseTokensFile(FILE, text);
  } catch (error) {
    expect(error).toBeInstanceOf(TokensFileError);
    expect((error as TokensFileError).code).toBe('invalid-tokens-file');
    return (error as TokensFileError).problems;
  }
  throw new Error('expected parseTokensFile to throw');
};

describe('parseTokensFile', () => {
  it('maps each token to its principal; a gate without gateId gets a stable id that is not the token', () => {
    // Arrange
    const text = JSON.stringify([
      { token: 'agent-token', role: 'agent', holderId: 'agent-a' },
      { token: 'gate-token', role: 'gate', resources: ['deploy-*'] },
      { token: 'viewer-token', role: 'viewer' },
    ]);

    // Act
    const registry = parseTokensFile(FILE, text);

    // Assert
    expect(registry.byToken('agent-token')).toEqual({ role: 'agent', holderId: 'agent-a' });
    const gate = registry.byAuthorization('Bearer gate-token');
    expect(gate).toEqual({
      role: 'gate',
      gateId: expect.stringMatching(/^gate-[0-9a-f]{12}$/),
      resources: ['deploy-*'],
    });
    expect(parseTokensFile(FILE, text).byToken('gate-token')).toEqual(gate);
    expect(JSON.stringify(gate)).not.toContain('gate-token');
    expect(registry.byToken('viewer-token')).toEqual({ role: 'viewer' });
  });

  it.each([
    ['an agent without holderId', [{ token: 't', role: 'agent' }], 'entry 0 field holderId'],
    ['an unknown role', [{ token: 't', role: 'admin' }], 'entry 0 field role'],
    ['a gate with no resources', [{ token: 't', role: 'gate', resources: [] }], 'entry 0 field resources'],
    [
      'a gate pattern with * in the middle',
      [{ token: 't', role: 'gate', resources: ['a*b'] }],
      'entry 0 field resources.0',
    ],
    ['a token with a space', [{ token: 'a b', role: 'viewer' }], 'entry 0 field token'],
    ['an unknown field', [{ token: 't', role: 'viewer', holderId: 'x' }], 'entry 0'],
    [
      'a second entry repeating a token',
      [
        { token: 't', role: 'viewer' },
        { token: 't', role: 'agent', holderId: 'a' },
      ],
      'entry 1 field token',
    ],
    ['an object instead of an array', { token: 't' }, 'the file'],
  ])('refuses %s with a message naming the entry and field', (_name, content, where) => {
    const problems = problemsOf(JSON.stringify(content));
    expect(problems.join('\n')).toContain(where);
  });

  it('refuses malformed JSON naming the file, and never echoes a token', () => {
    const problems = problemsOf('[{ "token": "s3cret", ');
    expect(problems.join('\n')).toContain('not valid JSON');
    expect(problemsOf(JSON.stringify([{ token: 's3cret', role: 'agent' }])).join('\n')).not.toContain('s3cret');
  });
});

describe('TokenRegistry', () => {
  const registry = parseTokensFile(
    FILE,
    JSON.stringify([{ token: 'agent-token', role: 'agent', holderId: 'agent-a' }]),
  );

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['a Basic credential', 'Basic agent-token'],
    ['an unknown token', 'Bearer other'],
  ])('refuses %s with UnauthenticatedError', (_name, header) => {
    expect(() => registry.byAuthorization(header)).toThrow(UnauthenticatedError);
  });

  it('accepts the scheme in any case', () => {
    expect(registry.byAuthorization('bearer agent-token')).toEqual({ role: 'agent', holderId: 'agent-a' });
  });
});

describe('authorize', () => {
  const gate = { role: 'gate', gateId: 'g', resources: ['deploy-*', 'db'] } as const;

  it('lets every role read', () => {
    for (const principal of [gate, { role: 'viewer' } as const, { role: 'agent', holderId: 'a' } as const]) {
      expect(() => authorize(principal, 'viewer')).not.toThrow();
    }
  });

  it('refuses another role with ForbiddenError naming both roles', () => {
    expect(() => authorize({ role: 'viewer' }, 'agent')).toThrow(
      new ForbiddenError('this operation needs the agent role; the token has the viewer role'),
    );
  });

  it('lets a gate report only for resources its patterns cover', () => {
    expect(() => authorize(gate, 'gate', 'deploy-web')).not.toThrow();
    expect(() => authorize(gate, 'gate', 'db')).not.toThrow();
    expect(() => authorize(gate, 'gate', 'db2')).toThrow(ForbiddenError);
    expect(() => authorize(gate, 'gate', 'payments')).toThrow(ForbiddenError);
  });
});
