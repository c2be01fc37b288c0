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

/**
 * Any rejection of a realistic synthetic log (fast-check picks the seed, the rejection and the
 * context radius), investigated.
 */
function anyInvestigation(size: { resources: number; generations: number; rejections: number; restarts: number }) {
  return fc
    .tuple(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.nat(), fc.integer({ min: 0, max: 25 }))
    .map(([seed, pick, radius]) => {
      const history = new ViewHistory({ checkpointEvery: 97 });
      synthesizeEvents({ seed, ...size }).forEach((e) => history.append(e));
      const rejections = history.head.rejections;
      const original = investigate(history, rejections[pick % rejections.length]!.stamp.position, radius);
      if (!original.ok) throw new Error('expected an investigation');
      return { history, original };
    });
}

describe('investigation export', () => {
  it(
    'rebuilds the same investigation from the exported JSON alone, for any rejection of a realistic log',
    () => {
      fc.assert(
        fc.property(
          anyInvestigation({ resources: 6, generations: 90, rejections: 12, restarts: 2 }),
          ({ history, original }) => {
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

  it(
    'writes a summary that never contradicts its own event table: a generation open at the refusal names what the table shows after it',
    () => {
      let checked = 0;
      fc.assert(
        fc.property(
          anyInvestigation({ resources: 3, generations: 60, rejections: 8, restarts: 1 }),
          ({ original: result }) => {
            // Arrange
            const { position } = result.investigation;
            const resource = result.investigation.rejection.resource;

            // Act
            const markdown = investigationMarkdown(result.investigation, undefined);

            // Assert: read the Markdown back as a reader would (two tables)
            const cells = (line: string): string[] =>
              line
                .split('|')
                .slice(1, -1)
                .map((c) => c.trim());
            const lines = markdown.split('\n');
            expect(markdown).toContain(`as of the refusal (position ${position})`);
            const generations = lines.filter((l) => /^\| (refused|floor) \|/.test(l)).map(cells);
            const events = lines
              .filter((l) => /^\| \d+/.test(l))
              .map(cells)
              .map(([pos, type, res, holder, fence]) => ({
                position: Number.parseInt(pos!, 10),
                type,
                res,
                holder,
                fence,
              }));
            for (const [, holder, fence, , end, how, after] of generations) {
              if (end === 'not in the loaded log') continue;
              expect(how, 'the "how it ended" cell').not.toBe('open');
              if (!how!.startsWith('open at the refusal')) continue;
              expect(end).toMatch(/\(projected at the refusal\)$/);
              for (const e of events) {
                if (e.position <= position || e.res !== resource || e.holder !== holder || e.fence !== fence) continue;
                if (e.type !== 'LeaseRenewed' && e.type !== 'LeaseReleased' && e.type !== 'LeaseExpired') continue;
                checked += 1;
                expect(after, `${e.type} at ${e.position} is in the table`).toContain(String(e.position));
                if (e.type !== 'LeaseRenewed')
                  expect(after).toContain(
                    `${e.type === 'LeaseReleased' ? 'released' : 'expired'} at position ${e.position}`,
                  );
              }
            }
          },
        ),
        fcParameters(80),
      );
      // The runs met generations that the table shows renewed or ended after the refusal.
      expect(checked).toBeGreaterThan(0);
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

  it('heads the Markdown summary with the day and time of the refusal, so a ticket read later says when', () => {
    // Arrange
    const history = new ViewHistory();
    synthesizeEvents({ seed: 4, resources: 3, generations: 30, rejections: 3, restarts: 0 }).forEach((e) =>
      history.append(e),
    );
    const rejection = history.head.rejections[0]!;
    const result = investigate(history, rejection.stamp.position);
    if (!result.ok) throw new Error('expected an investigation');
    const recorded = new Date(rejection.stamp.wallMillis).toISOString().replace('T', ' ');

    // Act
    const heading = investigationMarkdown(result.investigation, undefined).split('\n')[0];

    // Assert
    expect(heading).toBe(
      `## Stale write refused on \`${rejection.resource}\` at ${recorded} (log position ${rejection.stamp.position})`,
    );
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
