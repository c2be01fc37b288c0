import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import {
  synthesizeEvents,
  investigate,
  ViewHistory,
  type InvestigationResult,
  type RejectionView,
} from '@lease-fence/dashboard-model';
import { RejectionsTable } from '../rejections/rejections-table.js';
import { InvestigationView } from '../investigation/investigation-view.js';
import { ConnectionBanner } from './connection-banner.js';
import { EventTable } from './event-table.js';
import { FilterBar } from './filter-bar.js';
import { LiveControls } from './live-controls.js';
import { RestartList } from './restart-list.js';
import { RatePanels } from '../rates/rate-panels.js';

const noop = (): void => undefined;

function loadedHistory(): ViewHistory {
  const history = new ViewHistory({ checkpointEvery: 500 });
  synthesizeEvents({ seed: 8, resources: 20, generations: 400, rejections: 300, restarts: 2 }).forEach((e) =>
    history.append(e),
  );
  return history;
}

/** Counts elements carrying `data-testid="<id>"` in rendered HTML. */
function countTestIds(html: string, id: string): number {
  return html.split(`data-testid="${id}"`).length - 1;
}

describe('ConnectionBanner', () => {
  it.each([
    [{ status: 'connecting', after: 0, attempt: 1 } as const, 'Connecting to the coordinator'],
    [{ status: 'catching-up', after: 0 } as const, 'Catching up: 40 of 100 events loaded'],
    [{ status: 'live' } as const, 'Live · position 40'],
    [
      {
        status: 'reconnecting',
        after: 40,
        attempt: 3,
        retryInMillis: 2_000,
        reason: 'connection closed (code 1006)',
      } as const,
      'Retrying in 2.0 s, resuming after position 40. Is the coordinator running? Start it with `npm start`',
    ],
    [{ status: 'unauthorized', reason: 'invalid token' } as const, 'refused the viewer token'],
    [
      { status: 'diverged', position: 40, headPosition: 12 } as const,
      'log ends at position 12, before the 40 events this page loaded: it was reset or replaced. Reload the page',
    ],
    [
      { status: 'diverged', position: 40, headPosition: 40, differsAt: 40 } as const,
      'is not the one this page loaded: its event at position 40 differs. It was reset or replaced. Reload the page',
    ],
  ])('says where the stream stands and what to do: %j', (connection, text) => {
    const html = renderToString(
      <ConnectionBanner connection={connection} caughtUp={false} position={40} headPosition={100} held={false} />,
    );
    expect(html).toContain('data-testid="connection-state"');
    expect(html).toContain(`data-status="${connection.status}"`);
    expect(html).toContain(text);
  });

  const damage = { position: 300, field: 'data', message: 'event at position 300 is corrupt: data: invalid JSON' };
  it.each([
    [
      { status: 'log-damaged', after: 299, attempt: 4, retryInMillis: 2_000, damage } as const,
      'Checking again in 2.0 s.',
    ],
    [{ status: 'connecting', after: 299, attempt: 5, damage } as const, 'Checking again (attempt 5)'],
    [{ status: 'catching-up', after: 299, damage } as const, 'Checking again…'],
  ])(
    'names the damaged position, the field and the reason, and the last good position, without asking whether the coordinator runs: %j',
    (connection, text) => {
      const html = renderToString(
        <ConnectionBanner connection={connection} caughtUp={false} position={299} headPosition={607} held={false} />,
      );
      expect(html).toContain(
        'The coordinator&#x27;s event log is damaged at position 300, field data (event at position 300 is corrupt: data: invalid JSON); it refuses to serve events past it. Showing the log as of position 299, the last good one — not live.',
      );
      expect(html).toContain(text);
      expect(html).not.toContain('Is the coordinator running?');
      expect(html).not.toContain('Catching up');
    },
  );

  it('does not ask whether the coordinator runs after it closed the stream itself', () => {
    const connection = {
      status: 'reconnecting',
      after: 40,
      attempt: 2,
      retryInMillis: 500,
      reason: 'server closing: error',
    } as const;
    const html = renderToString(
      <ConnectionBanner connection={connection} caughtUp={false} position={40} headPosition={100} held={false} />,
    );
    expect(html).toContain('Disconnected (server closing: error). Retrying in 500 ms, resuming after position 40.');
    expect(html).not.toContain('Is the coordinator running?');
  });
});

describe('LiveControls', () => {
  it('shows how many events arrived since the paused position', () => {
    const html = renderToString(
      <LiveControls
        live={false}
        connected
        asOfPosition={1_200}
        asOfWallMillis={undefined}
        firstPosition={1}
        headPosition={1_450}
        playing={false}
        speed={1}
        beyondLog={undefined}
        onPause={noop}
        onResume={noop}
        onSeek={noop}
        onStep={noop}
        onMarker={noop}
        onPlay={noop}
        onSpeed={noop}
      />,
    );
    expect(html).toMatch(/data-testid="new-since" data-count="250">250<!-- --> new since position <!-- -->1,200/);
  });

  it('does not claim to be live while disconnected', () => {
    const props = {
      asOfPosition: 594,
      asOfWallMillis: undefined,
      firstPosition: 1,
      headPosition: 594,
      playing: false,
      speed: 1,
      beyondLog: undefined,
      onPause: noop,
      onResume: noop,
      onSeek: noop,
      onStep: noop,
      onMarker: noop,
      onPlay: noop,
      onSpeed: noop,
    };
    expect(renderToString(<LiveControls live connected={false} {...props} />)).toMatch(
      /disconnected · last position<!-- --> <!-- -->594/,
    );
    expect(renderToString(<LiveControls live connected {...props} />)).toMatch(/live position<!-- --> <!-- -->594/);
  });

  it('says when a requested position is not in the log', () => {
    const html = renderToString(
      <LiveControls
        live={false}
        connected
        asOfPosition={10}
        asOfWallMillis={undefined}
        firstPosition={1}
        headPosition={10}
        playing={false}
        speed={1}
        beyondLog={99}
        onPause={noop}
        onResume={noop}
        onSeek={noop}
        onStep={noop}
        onMarker={noop}
        onPlay={noop}
        onSpeed={noop}
      />,
    );
    expect(html).toContain('data-testid="not-in-log"');
    expect(html).toContain('is not in the log');
  });

  it('names each button by what it does and its key, not by its glyph (what a screen reader announces)', () => {
    const props = {
      connected: true,
      asOfPosition: 10,
      asOfWallMillis: undefined,
      firstPosition: 1,
      headPosition: 10,
      playing: false,
      speed: 1,
      beyondLog: undefined,
      onPause: noop,
      onResume: noop,
      onSeek: noop,
      onStep: noop,
      onMarker: noop,
      onPlay: noop,
      onSpeed: noop,
    };
    const named = (html: string): string[] =>
      [...html.matchAll(/<button\b[^>]*>/g)].map(([tag]) => {
        const label = /aria-label="([^"]*)"/.exec(tag)?.[1];
        const keys = /aria-keyshortcuts="([^"]*)"/.exec(tag)?.[1];
        return `${label ?? '(glyph only)'} [${keys ?? 'no key'}]`;
      });

    expect(named(renderToString(<LiveControls live {...props} />))).toEqual([
      'Pause [Space]',
      'Previous rejection or restart [p]',
      'One event back [[]',
      'One event forward []]',
      'Next rejection or restart [n]',
    ]);
    expect(named(renderToString(<LiveControls live={false} {...props} />))).toEqual([
      'Back to live [Space]',
      'Previous rejection or restart [p]',
      'One event back [[]',
      'One event forward []]',
      'Next rejection or restart [n]',
      'Replay [no key]',
    ]);
  });
});

describe('FilterBar', () => {
  it('shows "k of N lanes" when lanes were removed, and only "N lanes" when none was', () => {
    const removed = renderToString(
      <FilterBar filter={{ resource: 'deploy-*' }} shown={12} total={500} onChange={noop} />,
    );
    const kept = renderToString(<FilterBar filter={{ holder: 'agent-2' }} shown={3} total={3} onChange={noop} />);

    expect(removed).toMatch(/data-testid="lane-count" data-shown="12" data-total="500">12 of 500 lanes</);
    expect(kept).toMatch(/data-testid="lane-count" data-shown="3" data-total="3">3 lanes</);
  });

  it('says what the holder and fence filters match, which side of a rejection counts, and as of which position', () => {
    const counts = { leases: 12, rejections: 3, events: 40, lanesWithMatch: 2, asOfPosition: 1234 };

    const html = renderToString(
      <FilterBar
        filter={{ holder: 'agent-2', fenceMin: 60, fenceMax: 70 }}
        shown={3}
        total={3}
        counts={counts}
        onChange={noop}
      />,
    );

    expect(html).toContain(
      '12 leases of agent-2 with fences 60–70 · 3 rejections (refused or floor) · 40 events · in 2 of 3 lanes, as of position 1234',
    );
    expect(html).toContain('data-testid="filter-hide-unmatched"');
  });

  it('leaves "in k of N lanes" out when the lanes without a match are hidden', () => {
    const counts = { leases: 1, rejections: 0, events: 2, lanesWithMatch: 1, asOfPosition: 9 };

    const html = renderToString(
      <FilterBar
        filter={{ holder: 'a', hideUnmatchedLanes: true }}
        shown={1}
        total={3}
        counts={counts}
        onChange={noop}
      />,
    );

    expect(html).toContain('1 lease of a · 0 rejections (refused or floor) · 2 events, as of position 9');
    expect(html).toContain('1 of 3 lanes');
  });
});

describe('RejectionsTable', () => {
  it('renders only the rows in view, newest first, each carrying its log position', () => {
    // Arrange
    const rejections = loadedHistory().head.rejections;

    // Act
    const html = renderToString(
      <RejectionsTable rejections={rejections} selectedPosition={undefined} onSelect={noop} heightPx={260} />,
    );

    // Assert
    expect(rejections.length).toBe(300);
    expect(countTestIds(html, 'rejection-row')).toBe(16); // 10 rows in view + 6 overscan
    expect(html).toContain(`data-position="${rejections[rejections.length - 1]!.stamp.position}"`);
    expect(html).toContain('Rejections (<!-- -->300<!-- -->)');
  });

  it('badges a refusal its gate reported late, and only that one', () => {
    // Arrange: one refusal recorded 200 ms after the gate's reading, one recorded 30 s after it
    const [first, second] = loadedHistory().head.rejections;
    const at = (r: RejectionView, lagMillis: number): RejectionView => ({
      ...r,
      gateWallMillis: r.stamp.wallMillis - lagMillis,
    });

    // Act
    const html = renderToString(
      <RejectionsTable
        rejections={[at(first!, 200), at(second!, 30_000)]}
        selectedPosition={undefined}
        onSelect={noop}
      />,
    );

    // Assert: the badge sits in the second's row (newest first, so the first row)
    expect(countTestIds(html, 'reported-late-badge')).toBe(1);
    const rows = html.split('data-testid="rejection-row"').slice(1);
    expect(rows[0]).toContain('reported late');
    expect(rows[1]).not.toContain('reported late');
  });

  it("dates each refusal, so an operator reading a log that spans days knows which day's refusal a row is", () => {
    // Arrange: two refusals at the same time of day, a day apart; the later one reported late
    const [first, second] = loadedHistory().head.rejections;
    const on = (r: RejectionView, wallMillis: number): RejectionView => ({
      ...r,
      stamp: { ...r.stamp, wallMillis },
    });
    const lateOne = {
      ...on(second!, Date.UTC(2026, 11, 2, 22, 31, 46, 80)),
      gateWallMillis: Date.UTC(2026, 11, 2, 22, 31, 6, 68),
    };

    // Act
    const html = renderToString(
      <RejectionsTable
        rejections={[on(first!, Date.UTC(2026, 11, 1, 22, 31, 46, 80)), lateOne]}
        selectedPosition={undefined}
        onSelect={noop}
      />,
    );

    // Assert: each row names its day, and the late one's gate time names its own
    const rows = html.split('data-testid="rejection-row"').slice(1);
    expect(rows[0]).toContain('2026-12-02 22:31:46.080Z');
    expect(rows[0]).toContain('refused at 2026-12-02 22:31:06.068Z');
    expect(rows[1]).toContain('2026-12-01 22:31:46.080Z');
    expect(html).toContain('<th title="coordinator wall clock, UTC">time (UTC)</th>');
  });

  it('names the day once in the header when every refusal falls on it, and keeps the rows narrow', () => {
    // Arrange: two refusals on one day
    const [first, second] = loadedHistory().head.rejections;
    const on = (r: RejectionView, wallMillis: number): RejectionView => ({
      ...r,
      stamp: { ...r.stamp, wallMillis },
      gateWallMillis: undefined,
    });

    // Act
    const html = renderToString(
      <RejectionsTable
        rejections={[
          on(first!, Date.UTC(2026, 11, 3, 0, 0, 0, 5)),
          on(second!, Date.UTC(2026, 11, 3, 23, 59, 59, 999)),
        ]}
        selectedPosition={undefined}
        onSelect={noop}
      />,
    );

    // Assert
    expect(html).toContain('time (2026-12-03, UTC)');
    const rows = html.split('data-testid="rejection-row"').slice(1);
    expect(rows[0]).toContain('>23:59:59.999Z');
    expect(rows[1]).toContain('>00:00:00.005Z');
    expect(rows.join('')).not.toContain('2026-12-03 ');
  });

  it('shows refusals known to be missing above the table, each naming the gate, the resource and the seqs', () => {
    // Arrange
    const history = loadedHistory();
    const missing = [
      {
        stamp: history.head.rejections[0]!.stamp,
        resource: 'deploy-slot-b',
        gateId: 'deploy-gate',
        fromSeq: 8,
        throughSeq: 8,
        reportedSeq: 9,
      },
    ];

    // Act
    const html = renderToString(
      <RejectionsTable
        rejections={history.head.rejections}
        missing={missing}
        selectedPosition={undefined}
        onSelect={noop}
        heightPx={260}
      />,
    );

    // Assert
    expect(countTestIds(html, 'missing-rejection-row')).toBe(1);
    expect(html).toMatch(
      /gate <!-- -->deploy-gate<!-- --> on <!-- -->deploy-slot-b<!-- -->: refusal<!-- -->(<!-- -->)? seq <!-- -->8<!-- --> never/,
    );
  });
});

/** The investigation panel as server-rendered HTML, with no-op actions. */
function renderInvestigation(result: InvestigationResult, link: string | undefined): string {
  return renderToString(
    <InvestigationView
      result={result}
      importedFrom={undefined}
      link={link}
      widthPx={900}
      onClose={noop}
      onContextRadius={noop}
      onJump={noop}
      onExportJson={noop}
      onExportMarkdown={noop}
    />,
  );
}

describe('InvestigationView', () => {
  it('renders the explanation, both generations, the floor and the events around the rejection', () => {
    // Arrange
    const history = loadedHistory();
    const result = investigate(history, history.head.rejections[5]!.stamp.position);

    // Act
    const html = renderInvestigation(result, 'http://h/?inv=1');

    // Assert
    expect(result.ok).toBe(true);
    expect(html).toContain('data-testid="investigation"');
    expect(html).toContain('data-state="ready"');
    expect(html).toContain('data-testid="explanation"');
    expect(html).toContain(result.ok ? result.investigation.explanation.replace(/'/g, '&#x27;').slice(0, 40) : '');
    expect(countTestIds(html, 'event-row')).toBe(21);
    expect(html).toContain('data-testid="floor"');
  });

  it('heads the investigation with the day and time of the refusal (the as-of line gives the live time, not its)', () => {
    // Arrange
    const history = loadedHistory();
    const rejection = history.head.rejections[5]!;
    const recorded = new Date(rejection.stamp.wallMillis).toISOString().replace('T', ' ');

    // Act
    const html = renderInvestigation(investigate(history, rejection.stamp.position), undefined);

    // Assert
    const heading = /<h2>(.*?)<\/h2>/.exec(html)?.[1]?.replace(/<!-- -->/g, '');
    expect(heading).toBe(`Investigation · position ${rejection.stamp.position} · ${rejection.resource} · ${recorded}`);
  });

  it('says the generations are as of the refusal, and what the listed events show after it', () => {
    // Arrange: a rejection whose floor holder is still open at the refusal and renews or ends within ±10
    const history = loadedHistory();
    const found = history.head.rejections
      .map((r) => investigate(history, r.stamp.position))
      .flatMap((result) => (result.ok ? [result.investigation] : []))
      .flatMap((inv) => {
        const g = inv.current;
        if (g === undefined || g.end !== undefined) return [];
        const later = inv.context.events.find(
          (e) =>
            e.position > inv.position &&
            (e.event.type === 'LeaseRenewed' || e.event.type === 'LeaseReleased') &&
            e.event.data.resource === inv.rejection.resource &&
            e.event.data.holderId === g.holderId &&
            e.event.data.fence === g.fence,
        );
        return later === undefined ? [] : [{ inv, later }];
      })[0];
    if (found === undefined) throw new Error('the synthetic log has no such rejection');

    // Act
    const html = renderInvestigation({ ok: true, investigation: found.inv }, undefined);
    const text = html.replace(/<!-- -->/g, '');

    // Assert
    expect(text).toContain(`Both generations as of the refusal (position ${found.inv.position})`);
    expect(text).toMatch(new RegExp(`After the refusal \\(in the events below\\): [^<]*\\b${found.later.position}\\b`));
  });

  it('says clearly that an unknown position is not in the log', () => {
    const result = investigate(loadedHistory(), 99_999_999);
    const html = renderInvestigation(result, undefined);
    expect(html).toContain('data-testid="not-in-log"');
    expect(html).toMatch(/Position <!-- -->99999999<!-- --> is not in the log/);
  });
});

describe('RestartList', () => {
  it('lists every restart with its recovered fence, replay and carried leases', () => {
    const restarts = loadedHistory().head.restarts;
    const html = renderToString(<RestartList restarts={restarts} onJump={noop} />);
    expect(countTestIds(html, 'restart-marker')).toBe(2); // the synthetic log's first start is not a restart
    expect(html).toContain('recovered fence');
    expect(html).toMatch(/leases? carried, grace until/);
  });

  it('says "1 lease carried", not "1 leases"', () => {
    const restart = loadedHistory().head.restarts.find((r) => r.carriedLeases.length > 0)!;
    const one = { ...restart, carriedLeases: restart.carriedLeases.slice(0, 1) };
    const html = renderToString(<RestartList restarts={[one]} onJump={noop} />);
    expect(html).toContain('1 lease carried, grace until');
  });
});

describe('RatePanels', () => {
  it('titles the hold-duration histogram', () => {
    const html = renderToString(
      <RatePanels
        bins={[]}
        binWidthMillis={1_000}
        denials={[]}
        holdBins={[{ label: '< 100 ms', fromMillis: 0, count: 3 }]}
        holdP50Millis={40}
        holdP95Millis={90}
        cursorWallMillis={undefined}
        onCursor={noop}
        widthPx={900}
      />,
    );
    expect(html).toMatch(/<figcaption data-testid="hold-title"><h4>Hold durations<\/h4>/);
  });
});

describe('EventTable', () => {
  it('names the day of its wall times: once in the header when the rows share it, else on each row', () => {
    // Arrange: the first two events of a log, on one day, then the second moved to the next day
    const [a, b] = synthesizeEvents({ seed: 3, resources: 2, generations: 4, rejections: 0, restarts: 0 });
    const on = (e: NonNullable<typeof a>, wallMillis: number): NonNullable<typeof a> =>
      ({ ...e, event: { ...e.event, data: { ...e.event.data, wallMillis } } }) as NonNullable<typeof a>;
    const render = (events: NonNullable<typeof a>[]): string =>
      renderToString(<EventTable events={events} focusPosition={undefined} onPick={noop} caption="Events" />);

    // Act
    const oneDay = render([on(a!, Date.UTC(2026, 11, 2, 23, 59, 59, 900)), on(b!, Date.UTC(2026, 11, 2, 0, 0, 0, 1))]);
    const twoDays = render([on(a!, Date.UTC(2026, 11, 2, 23, 59, 59, 900)), on(b!, Date.UTC(2026, 11, 3, 0, 0, 0, 1))]);

    // Assert
    expect(oneDay).toContain('<th>wall (2026-12-02, UTC)</th>');
    expect(oneDay).toContain('<td>23:59:59.900Z</td>');
    expect(twoDays).toContain('<th>wall (UTC)</th>');
    expect(twoDays).toContain('<td>2026-12-02 23:59:59.900Z</td>');
    expect(twoDays).toContain('<td>2026-12-03 00:00:00.001Z</td>');
  });
});
