import type { FenceToken } from 'lease-fence';
import { describe, expect, it } from 'vitest';
import { reportAdmits, type AdmitSink } from './admit-reporter.js';

/** A deferred answer of the sink, resolved or rejected by the test. */
interface Pending {
  readonly token: FenceToken;
  resolve(): void;
  reject(error: Error): void;
}

/** A sink whose reports stay in flight until the test settles them. */
const heldSink = (): AdmitSink & { readonly pending: Pending[]; readonly sent: string[] } => {
  const pending: Pending[] = [];
  const sent: string[] = [];
  return {
    pending,
    sent,
    reportAdmitted: (token) =>
      new Promise<void>((resolve, reject) => {
        sent.push(`${token.resource}:${token.fence}`);
        pending.push({ token, resolve, reject });
      }),
  };
};

const token = (resource: string, fence: number, holderId = `agent-${fence}`): FenceToken => ({
  resource,
  holderId,
  fence,
});

/** Lets the reporter's promise chains run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('reportAdmits', () => {
  it('reports a new fence once, ignores repeats and lower fences, and coalesces fences admitted while a report is in flight into the highest', async () => {
    // Arrange
    const sink = heldSink();
    const reported: number[] = [];
    const admits = reportAdmits(sink, { onReported: (t) => reported.push(t.fence) });
    // Act
    admits.admitted(token('slot', 5));
    admits.admitted(token('slot', 5)); // the same fence's next write
    admits.admitted(token('slot', 6)); // in flight: waits
    admits.admitted(token('slot', 4)); // lower: never reported
    admits.admitted(token('slot', 8)); // replaces 6
    sink.pending.shift()?.resolve();
    await settle();
    sink.pending.shift()?.resolve();
    await settle();
    await admits.stop();
    // Assert
    expect(sink.sent).toEqual(['slot:5', 'slot:8']);
    expect(reported).toEqual([5, 8]);
  });

  it('keeps one report in flight per resource, not one for all', async () => {
    // Arrange
    const sink = heldSink();
    const admits = reportAdmits(sink);
    // Act
    admits.admitted(token('slot-a', 2));
    admits.admitted(token('slot-b', 3));
    // Assert
    expect(sink.sent).toEqual(['slot-a:2', 'slot-b:3']);
    for (const pending of sink.pending) pending.resolve();
    await admits.stop();
  });

  it('does not report again the floors a restarted gate restored', async () => {
    // Arrange
    const sink = heldSink();
    const admits = reportAdmits(sink, { admittedFences: new Map([['slot', 7]]) });
    // Act
    admits.admitted(token('slot', 7));
    admits.admitted(token('slot', 9));
    // Assert
    expect(sink.sent).toEqual(['slot:9']);
    sink.pending.shift()?.resolve();
    await admits.stop();
  });

  it('passes a failed report to onError, does not retry it, and reports the next new fence', async () => {
    // Arrange
    const sink = heldSink();
    const errors: string[] = [];
    const admits = reportAdmits(sink, {
      onError: (error, t) => errors.push(`${t.fence}: ${(error as Error).message}`),
    });
    // Act
    admits.admitted(token('slot', 3));
    sink.pending.shift()?.reject(new Error('coordinator down'));
    await settle();
    admits.admitted(token('slot', 3));
    admits.admitted(token('slot', 4));
    sink.pending.shift()?.resolve();
    await admits.stop();
    // Assert
    expect(errors).toEqual(['3: coordinator down']);
    expect(sink.sent).toEqual(['slot:3', 'slot:4']);
  });

  it('stop() waits for the report in flight and ignores later admits', async () => {
    // Arrange
    const sink = heldSink();
    const admits = reportAdmits(sink);
    admits.admitted(token('slot', 1));
    let stopped = false;
    // Act
    const stopping = admits.stop().then(() => {
      stopped = true;
    });
    await settle();
    const stoppedBeforeAnswer = stopped;
    sink.pending.shift()?.resolve();
    await stopping;
    admits.admitted(token('slot', 2));
    // Assert
    expect(stoppedBeforeAnswer).toBe(false);
    expect(stopped).toBe(true);
    expect(sink.sent).toEqual(['slot:1']);
  });
});
