/**
 * The dashboard shell: the viewer token, the URL as the state, and an imported investigation.
 * With a token it shows the {@link Dashboard} (dashboard.tsx), whose panels all read one view
 * state: the fold as of the URL's position (live = the head).
 */
import { useCallback, useEffect, useRef, useState, type ChangeEvent, type ReactElement } from 'react';
import {
  exportInvestigation,
  importInvestigation,
  investigationMarkdown,
  parseInvestigationExport,
  type InvestigationResult,
  type ViewHistory,
} from '@lease-fence/dashboard-model';
import { forgetViewerToken, resolveViewerToken, saveViewerToken } from '../stream/viewer-token.js';
import type { DashboardEnvironment } from './environment.js';
import { Dashboard } from './dashboard.js';
import { FilePickerButton } from './file-picker.js';
import { HolderColorContext, useHolderColors } from './holder-colors.js';
import { LazyInvestigationView } from './lazy-panels.js';
import { TokenPrompt } from './token-prompt.js';
import {
  describeUnreadableAsOf,
  describeView,
  formatViewUrl,
  isNewView,
  parseViewUrl,
  type ViewUrlState,
} from './url-state.js';

/** Props of {@link App}. */
export interface AppProps {
  readonly env: DashboardEnvironment;
}

/** Holders of no log. */
const NO_HOLDERS: readonly string[] = [];

interface Imported {
  readonly name: string;
  readonly result: InvestigationResult;
  readonly history: ViewHistory;
}

/** The whole dashboard. */
export function App({ env }: AppProps): ReactElement {
  const [initial] = useState(() => resolveViewerToken(env.initialSearch, env.storage));
  const [token, setToken] = useState<string | undefined>(initial.token);
  const [tokenMessage, setTokenMessage] = useState<string | undefined>(undefined);
  const [view, setView] = useState<ViewUrlState>(() => parseViewUrl(initial.searchWithoutToken ?? env.initialSearch));
  // Said until the view changes (the URL is then rewritten without the unreadable value).
  const [unreadableAt, setUnreadableAt] = useState<string | undefined>(() =>
    describeUnreadableAsOf(initial.searchWithoutToken ?? env.initialSearch),
  );
  const [imported, setImported] = useState<Imported | undefined>(undefined);
  const [importError, setImportError] = useState<string | undefined>(undefined);

  useEffect(() => {
    if (initial.searchWithoutToken !== undefined) env.setSearch(initial.searchWithoutToken, 'replace');
  }, [env, initial]);
  // The latest view, for callbacks: written wherever the view changes (never during render).
  const viewRef = useRef(view);
  useEffect(
    () =>
      env.onPopState((search) => {
        const next = parseViewUrl(search);
        viewRef.current = next;
        setView(next);
        setUnreadableAt(describeUnreadableAsOf(search));
      }),
    [env],
  );

  const updateView = useCallback(
    (next: ViewUrlState) => {
      const before = viewRef.current;
      viewRef.current = next;
      setView(next);
      setUnreadableAt(undefined);
      env.setSearch(formatViewUrl(next), isNewView(before, next) ? 'push' : 'replace');
    },
    [env],
  );
  const changeView = useCallback(
    (change: (current: ViewUrlState) => ViewUrlState) => updateView(change(viewRef.current)),
    [updateView],
  );
  const importedHolders = imported?.history.index.holderIds() ?? NO_HOLDERS;
  const importedColors = useHolderColors(importedHolders, importedHolders.length);

  const onImportFile = (event: ChangeEvent<HTMLInputElement>): void => {
    const file = event.target.files?.[0];
    if (file === undefined) return;
    void file.text().then((text) => {
      const parsed = parseInvestigationExport(text);
      if (!parsed.ok) {
        setImportError(`${file.name}: ${parsed.message}`);
        return;
      }
      setImportError(undefined);
      const { result, history } = importInvestigation(parsed.value);
      setImported({ name: file.name, result, history });
    });
  };
  const importControl = (
    <FilePickerButton
      label="Open log file…"
      title="Open an exported investigation (JSON: the log events it needs, with their positions); no coordinator needed"
      accept="application/json,.json"
      onChange={onImportFile}
      testId="import-file"
    />
  );
  // Shown wherever the import control is: a file that did not import is said even over an imported investigation.
  const importAlert =
    importError === undefined ? undefined : (
      <p className="error" role="alert">
        {importError}
      </p>
    );

  if (imported !== undefined) {
    return (
      <div className="app">
        <header className="topbar">
          <h1>lease-fence</h1>
          {importControl}
        </header>
        {importAlert}
        <HolderColorContext value={importedColors}>
          <LazyInvestigationView
            result={imported.result}
            importedFrom={imported.name}
            link={undefined}
            widthPx={960}
            onClose={() => setImported(undefined)}
            onContextRadius={undefined}
            onJump={() => undefined}
            onExportJson={() => {
              if (imported.result.ok)
                env.download(
                  `investigation-${imported.result.investigation.position}.json`,
                  JSON.stringify(exportInvestigation(imported.history, imported.result.investigation), null, 2),
                  'application/json',
                );
            }}
            onExportMarkdown={() => {
              if (imported.result.ok)
                env.download(
                  `investigation-${imported.result.investigation.position}.md`,
                  investigationMarkdown(imported.result.investigation, undefined),
                  'text/markdown',
                );
            }}
          />
        </HolderColorContext>
      </div>
    );
  }

  if (token === undefined) {
    return (
      <div className="app">
        <header className="topbar">
          <h1>lease-fence</h1>
          {importControl}
        </header>
        {importAlert}
        <TokenPrompt
          message={tokenMessage}
          linkView={describeView(view)}
          onSubmit={(typed) => {
            setTokenMessage(undefined);
            setToken(saveViewerToken(env.storage, typed));
          }}
        />
      </div>
    );
  }

  return (
    <Dashboard
      key={token}
      env={env}
      token={token}
      view={view}
      updateView={updateView}
      changeView={changeView}
      importControl={importControl}
      importAlert={importAlert}
      unreadableAt={unreadableAt}
      onTokenRefused={(message) => {
        forgetViewerToken(env.storage);
        setTokenMessage(message);
        setToken(undefined);
      }}
    />
  );
}
