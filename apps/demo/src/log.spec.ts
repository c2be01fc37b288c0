import { describe, expect, it } from 'vitest';
import { formatLine, seconds } from './log.js';

describe('formatLine', () => {
  it('lines up time, actor, resource and message in fixed columns', () => {
    // Arrange
    const wallMillis = new Date(2026, 0, 2, 9, 5, 7, 42).getTime();

    // Act
    const line = formatLine(wallMillis, 'agent-2', 'deploy-slot-a', 'granted fence 7');

    // Assert
    expect(line).toBe('09:05:07.042  agent-2        deploy-slot-a  granted fence 7');
  });

  it('shows a dash when the step concerns no resource', () => {
    expect(formatLine(0, 'demo', undefined, 'stopping')).toMatch(/ demo {11}- {14}stopping$/);
  });
});

describe('seconds', () => {
  it('prints milliseconds as seconds with two decimals', () => {
    expect(seconds(2900)).toBe('2.90 s');
  });
});
