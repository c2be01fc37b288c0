/**
 * Asks for the viewer token when the URL has none and the tab has not saved one (or the
 * coordinator refused it).
 */
import { useState, type ReactElement } from 'react';

/** Props of {@link TokenPrompt}. */
export interface TokenPromptProps {
  /** Why the token is asked for again (e.g. refused), if it is. */
  readonly message: string | undefined;
  readonly onSubmit: (token: string) => void;
}

/** A form with one password field. */
export function TokenPrompt({ message, onSubmit }: TokenPromptProps): ReactElement {
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
