/**
 * The viewer token: from the page URL (`?token=`) or a prompt, kept in `sessionStorage` (this tab
 * only), and removed from the address bar so permalinks never carry it.
 */

/** `sessionStorage` key of the viewer token. */
export const VIEWER_TOKEN_KEY = 'lease-fence.viewer-token';

/** The part of `Storage` used. */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/**
 * Reads the viewer token: a `token` URL parameter wins (and is saved); otherwise the saved one.
 *
 * @param search - `location.search`.
 * @param storage - `sessionStorage`.
 * @returns The token (undefined: ask for one) and, when the URL carried it, the search string
 *   without it (to `history.replaceState` so the token does not stay in the address bar).
 */
export function resolveViewerToken(
  search: string,
  storage: StorageLike,
): { readonly token: string | undefined; readonly searchWithoutToken: string | undefined } {
  const params = new URLSearchParams(search);
  const fromUrl = params.get('token')?.trim();
  if (fromUrl !== undefined && fromUrl !== '') {
    storage.setItem(VIEWER_TOKEN_KEY, fromUrl);
    params.delete('token');
    const rest = params.toString();
    return { token: fromUrl, searchWithoutToken: rest === '' ? '' : `?${rest}` };
  }
  const saved = storage.getItem(VIEWER_TOKEN_KEY)?.trim();
  return { token: saved === undefined || saved === '' ? undefined : saved, searchWithoutToken: undefined };
}

/**
 * Saves a token typed into the prompt.
 *
 * @throws TypeError if `token` is empty after trimming.
 */
export function saveViewerToken(storage: StorageLike, token: string): string {
  const trimmed = token.trim();
  if (trimmed === '') throw new TypeError('saveViewerToken: token must be a non-empty string, got an empty one');
  storage.setItem(VIEWER_TOKEN_KEY, trimmed);
  return trimmed;
}

/** Forgets the saved token (after the coordinator refused it). */
export function forgetViewerToken(storage: StorageLike): void {
  storage.removeItem(VIEWER_TOKEN_KEY);
}
