import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { synthesizeEvents } from './synthetic.js';
import { fcParameters, NO_WALL_CLOCK_TIMEOUT } from './testing/fc-seed.js';
import {
  exportInvestigation,
  importInvestigation,
  investigationMarkdown,
  parseInvestigationExport,
} from './investigation-export.js';
import { investigate } from './investigation.js';
import { ViewHistory } from './view-history.js';

describe('investigation export', () => {
  it(
    'rebuilds the same investigation from the exported JSON alone, for any rejection of a realistic log',
    () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 2 ** 31 - 1 }),
          fc.nat(),
          fc.integer({ min: 0, max: 25 }),
          (seed, pick, radius) => {
            // Arrange
            const history = new ViewHistory({ checkpointEvery: 97 });
            synthesizeEvents({ seed, resources: 6, generations: 90, rejections: 12, restarts: 2 }).forEach((e) =>
              history.append(e),
            );
            const rejections = history.head.rejections;
            const position = rejections[pick % rejections.length]!.stamp.position;
            const original = investigate(history, position, radius);
            if (!original.ok) throw new Error('expected an investigation');
            expect(original.investigation.rejected).toBeDefined();

            // Act
            const text = JSON.stringify(exportInvestigation(history, original.investigation));
            const parsed = parseInvestigationExport(text);
            if (!parsed.ok) throw new Error(parsed.message);
            const imported = importInvestigation(parsed.value).result;

            // Assert
            expect(imported).toEqual(original);
          },
        ),
        fcParameters(60),
      );
    },
    NO_WALL_CLOCK_TIMEOUT,
  );

  it('writes a Markdown summary with the sentence, both holders and the link', () => {
    // Arrange
    const history = new ViewHistory();
    synthesizeEvents({ seed: 4, resources: 3, generations: 30, rejections: 3, restarts: 1 }).forEach((e) =>
      history.append(e),
    );
    const result = investigate(history, history.head.rejections[0]!.stamp.position);
    if (!result.ok) throw new Error('expected an investigation');

    // Act
    const markdown = investigationMarkdown(result.investigation, 'http://127.0.0.1:3000/?inv=42');

    // Assert
    expect(markdown).toContain(result.investigation.explanation);
    expect(markdown).toContain(
      `| refused | ${result.investigation.rejection.rejected.holderId} | ${result.investigation.rejection.rejected.fence} |`,
    );
    expect(markdown).toContain('Open in the dashboard: http://127.0.0.1:3000/?inv=42');
  });

  it.each([
    ['not JSON', '{', /^not JSON/],
    ['another format', '{"format":"x"}', /format must be "lease-fence\/investigation"/],
    [
      'a newer version',
      '{"format":"lease-fence/investigation","version":2}',
      /unsupported investigation export version 2/,
    ],
    [
      'a bad position',
      '{"format":"lease-fence/investigation","version":1,"position":0,"contextRadius":1,"events":[]}',
      /position must be a positive integer/,
    ],
    [
      'an invalid event',
      '{"format":"lease-fence/investigation","version":1,"position":1,"contextRadius":1,"events":[{"position":1,"recordedAtMillis":1,"event":{"type":"LeaseGranted","version":1,"data":{}}}]}',
      /^events\.0\.event\.data\./,
    ],
  ])('refuses %s with a message that says what is wrong', (_name, text, message) => {
    const result = parseInvestigationExport(text);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(message);
  });
});
