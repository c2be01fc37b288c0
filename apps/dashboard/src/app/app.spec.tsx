import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { FakeSocket, ManualTimers } from '../testing/fake-socket.js';
import { App } from './app.js';
import type { DashboardEnvironment } from './environment.js';

function environment(search: string, saved?: string): DashboardEnvironment & { searches: string[] } {
  const items = new Map<string, string>(saved === undefined ? [] : [['lease-fence.viewer-token', saved]]);
  const searches: string[] = [];
  return {
    searches,
    origin: 'http://127.0.0.1:3000',
    initialSearch: search,
    storage: {
      getItem: (k) => items.get(k) ?? null,
      setItem: (k, v) => void items.set(k, v),
      removeItem: (k) => void items.delete(k),
    },
    fetch: () => Promise.reject(new Error('no network in this test')),
    connect: (url) => new FakeSocket(url),
    timers: new ManualTimers(),
    now: () => 1_780_000_000_000,
    schedule: (cb) => cb(),
    setSearch: (s) => void searches.push(s),
    onPopState: () => () => undefined,
    download: () => undefined,
    debugTarget: undefined,
  };
}

describe('App', () => {
  it('asks for a viewer token when neither the URL nor the tab has one, saying that the link’s view opens after it', () => {
    const html = renderToString(<App env={environment('?inv=12')} />);
    expect(html).toContain('data-testid="token-prompt"');
    expect(html).toContain('data-testid="import-file"');
    expect(html.replace(/<!-- -->/g, '')).toContain(
      'This link opens the investigation of the rejection at log position 12 once you connect',
    );
  });

  it('draws the investigation file picker as a button, not the raw "Choose File" control', () => {
    const html = renderToString(<App env={environment('')} />);
    expect(html).toMatch(/<label class="button"[^>]*>Open log file…<input type="file" class="sr-only"/);
  });

  it('renders the shell with the connection state and a loading message that says what to do', () => {
    const html = renderToString(<App env={environment('?token=abc')} />);
    for (const id of [
      'connection-state',
      'live-controls',
      'lane-count',
      'lanes-canvas',
      'loading-state',
      'restart-markers',
      'rates',
    ]) {
      expect(html, id).toContain(`data-testid="${id}"`);
    }
    expect(html).toContain('data-total="0">0 lanes');
  });

  it('says that an unreadable at= was ignored, next to the live view it shows instead', () => {
    const html = renderToString(<App env={environment('?at=yesterday', 'saved-token')} />);
    expect(html).toContain('data-testid="unreadable-at"');
    expect(html).toContain('data-live="true"');
  });

  it('opens the investigation named in the URL (loading until the log arrives)', () => {
    const html = renderToString(<App env={environment('?inv=1234', 'saved-token')} />);
    expect(html).toContain('data-testid="investigation"');
    expect(html).toContain('data-state="loading"');
  });
});
