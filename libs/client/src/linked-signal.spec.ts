import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { linkSignals } from './linked-signal.js';

describe('linkSignals', () => {
  it('aborts with the reason of the first source that aborts', () => {
    // Arrange
    const first = new AbortController();
    const second = new AbortController();
    const linked = linkSignals(first.signal, undefined, second.signal);

    // Act
    second.abort('second');
    first.abort('first');

    // Assert
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe('second');
  });

  it('starts aborted when a source already is', () => {
    // Act
    const linked = linkSignals(new AbortController().signal, AbortSignal.abort('gone'));

    // Assert
    expect(linked.signal.reason).toBe('gone');
  });

  it('leaves no listener on a long-lived source once disposed, however often it is linked', () => {
    // Arrange
    const longLived = new AbortController();

    // Act
    for (let request = 0; request < 1000; request += 1)
      linkSignals(longLived.signal, new AbortController().signal).dispose();

    // Assert
    expect(getEventListeners(longLived.signal, 'abort')).toHaveLength(0);
  });
});
