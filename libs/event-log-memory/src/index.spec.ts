import * as core from '@lease-fence/coordinator-core';
import { describe, expect, it } from 'vitest';
import * as memory from './index.js';

// The memory log's semantics are contract-tested where it is implemented, in coordinator-core
// (src/ports/memory-event-log.spec.ts); this package must stay a name for that one implementation.
describe('@lease-fence/event-log-memory', () => {
  it('exports coordinator-core\'s in-memory EventLog itself, not a copy', () => {
    expect(memory.createMemoryEventLog).toBe(core.createMemoryEventLog);
    expect(memory.createMemoryEventLogStorage).toBe(core.createMemoryEventLogStorage);
  });
});
