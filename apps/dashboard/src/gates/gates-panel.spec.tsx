import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { GateRow } from '@lease-fence/dashboard-model';
import { fetchGates } from './gates-client.js';
import { GatesPanel } from './gates-panel.js';

const row = (overrides: Partial<GateRow> = {}): GateRow => ({
  gateId: 'deploy-gate',
  resource: 'deploy-slot-a',
  floor: { holderId: 'agent-2', fence: 7 },
  outboxBacklog: 0,
  refusals: 3,
  invalidTokens: 1,
  seqGaps: 0,
  missingRefusals: 0,
  lastContactAgoMillis: 3_400,
  stale: false,
  ...overrides,
});

const text = (html: string): string => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

describe('GatesPanel', () => {
  it('shows one row per gate and resource: floor, backlog, refusals, invalid tokens, seq gaps, last contact', () => {
    const html = renderToString(
      <GatesPanel
        rows={[
          row(),
          row({
            resource: 'deploy-slot-b',
            floor: undefined,
            seqGaps: 1,
            missingRefusals: 2,
            stale: true,
            lastContactAgoMillis: 61_000,
          }),
        ]}
        error={undefined}
        staleAfterMillis={15_000}
      />,
    );

    expect(html.split('data-testid="gate-row"').length - 1).toBe(2);
    expect(text(html)).toContain('deploy-gate deploy-slot-a agent-2 · 7 0 3 1 0 3 s ago');
    expect(text(html)).toContain('deploy-slot-b none yet 0 3 1 1 (2 refusals lost) 1 min ago stale');
    expect(html.split('data-testid="gate-stale"').length - 1).toBe(1);
  });

  it('says so when no gate reports, and shows a failed poll', () => {
    const empty = renderToString(<GatesPanel rows={[]} error={undefined} staleAfterMillis={15_000} />);
    const failed = renderToString(
      <GatesPanel rows={undefined} error="GET /v1/gates answered 500" staleAfterMillis={15_000} />,
    );

    expect(empty).toContain('data-testid="gates-empty"');
    expect(text(empty)).toContain('No gate has reported to this coordinator');
    expect(text(failed)).toContain('GET /v1/gates answered 500');
  });
});

describe('fetchGates', () => {
  it('parses the reply, and names the field of a malformed one', async () => {
    const reply = { nowMillis: 5, gates: [] };
    const seen: { url: string; authorization: string | undefined }[] = [];
    const ok = await fetchGates('http://c', 'viewer', async (url, init) => {
      seen.push({ url, authorization: init.headers['authorization'] });
      return { status: 200, ok: true, json: async () => reply };
    });
    const malformed = await fetchGates('http://c', 'viewer', async () => ({
      status: 200,
      ok: true,
      json: async () => ({ nowMillis: 'x', gates: [] }),
    }));

    expect(ok).toEqual({ ok: true, reply });
    expect(seen).toEqual([{ url: 'http://c/v1/gates', authorization: 'Bearer viewer' }]);
    expect(malformed).toEqual({ ok: false, message: expect.stringContaining('nowMillis') });
  });
});
