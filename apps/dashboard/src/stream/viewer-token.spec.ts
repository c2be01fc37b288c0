import { describe, expect, it } from 'vitest';
import {
  forgetViewerToken,
  resolveViewerToken,
  saveViewerToken,
  VIEWER_TOKEN_KEY,
  type StorageLike,
} from './viewer-token.js';

function memoryStorage(): StorageLike & { items: Map<string, string> } {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (k) => items.get(k) ?? null,
    setItem: (k, v) => void items.set(k, v),
    removeItem: (k) => void items.delete(k),
  };
}

describe('resolveViewerToken', () => {
  it('takes the token from the URL, saves it for the tab and gives the search without it', () => {
    const storage = memoryStorage();
    expect(resolveViewerToken('?inv=42&token=abc&at=7', storage)).toEqual({
      token: 'abc',
      searchWithoutToken: '?inv=42&at=7',
    });
    expect(storage.items.get(VIEWER_TOKEN_KEY)).toBe('abc');
  });

  it('falls back to the saved token, and to none', () => {
    const storage = memoryStorage();
    expect(resolveViewerToken('?inv=42', storage)).toEqual({ token: undefined, searchWithoutToken: undefined });
    saveViewerToken(storage, '  typed ');
    expect(resolveViewerToken('', storage).token).toBe('typed');
    forgetViewerToken(storage);
    expect(resolveViewerToken('', storage).token).toBeUndefined();
  });

  it('refuses to save an empty token with a TypeError naming the field', () => {
    expect(() => saveViewerToken(memoryStorage(), '  ')).toThrow(TypeError);
  });
});
