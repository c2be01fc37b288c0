/**
 * Asks for the viewer token when the URL has none and the tab has not saved one (or the
 * coordinator refused it). The link's view is kept: entering the token opens it.
 */
import { useState, type ReactElement } from 'react';

/** Props of {@link TokenPrompt}. */
export interface TokenPromptProps {
  /** Why the token is asked for again (e.g. refused), if it is. */
  readonly message: string | undefined;
  /**
   * What the page's link opens (see `describeView` in url-state.ts), said so the reader knows the
   * link's view opens once the token is entered; undefined for the plain live view.
   */
  readonly linkView: string | undefined;
  readonly onSubmit: (token: string) => void;
}

/** A form with one password field. */
export function TokenPrompt({ message, linkView, onSubmit }: TokenPromptProps): ReactElement {
  const [token, setToken] = useState('');
  return (
    <form
      className="token-prompt"
      data-testid="token-prompt"
      onSubmit={(e) => {
        e.preventDefault();
        if (token.trim() !== '') onSubmit(token);
      }}
    >
      <h2>Viewer token</h2>
      <p>
        The dashboard reads the coordinator's log with a <em>viewer</em> token. Open the link the coordinator printed at
        start (it carries <code>?token=</code>), or paste a viewer token from the coordinator's token file. It is kept
        for this tab only.
      </p>
      {linkView !== undefined && (
        <p data-testid="token-keeps-link">
          This link opens {linkView} once you connect: the token is asked for once per tab, and the link is kept.
        </p>
      )}
      {message !== undefined && (
        <p className="error" role="alert">
          {message}
        </p>
      )}
      <label>
        Token{' '}
        <input
          type="password"
          autoComplete="off"
          value={token}
          onChange={(e) => setToken(e.target.value)}
          data-testid="token-input"
        />
      </label>
      <button type="submit">Connect</button>
    </form>
  );
}
