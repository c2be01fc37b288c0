import { describe, expect, it } from 'vitest';
import { ResourcePatternSchema, resourceMatches } from './resource-pattern.js';

describe('resourceMatches', () => {
  it.each([
    ['db', 'db', true],
    ['db', 'db-2', false],
    ['deploy-*', 'deploy-', true],
    ['deploy-*', 'deploy-web', true],
    ['deploy-*', 'deplo', false],
    ['Deploy-*', 'deploy-web', false],
    ['*', 'anything', true],
  ])('pattern %s covers %s: %s', (pattern, resource, expected) => {
    expect(resourceMatches(pattern, resource)).toBe(expected);
  });
});

describe('ResourcePatternSchema', () => {
  it.each(['db', 'deploy-*', '*', 'repo:web/deploy-slot'])('accepts %s', (pattern) => {
    expect(ResourcePatternSchema.parse(pattern)).toBe(pattern);
  });

  it.each([
    ['an empty pattern', '', 'must not be empty'],
    ['a * in the middle', 'a*b', 'only as its last character'],
    ['a leading space', ' db', 'must be a resource id'],
    ['a pattern too long', `${'a'.repeat(201)}*`, 'at most 201 characters'],
  ])('refuses %s', (_name, pattern, message) => {
    const result = ResourcePatternSchema.safeParse(pattern);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toContain(message);
  });
});
