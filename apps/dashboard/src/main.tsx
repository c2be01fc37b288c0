/**
 * Browser entry: mounts the dashboard on `#root` with the real browser environment.
 * With `?demo=<seed>` (optionally `&rate=<events/s>&history=<share loaded at once>`) it serves a synthetic log instead of a coordinator — only in development
 * (`npm run dev`) or in a build made with `VITE_LEASE_FENCE_DEMO=1` (for profiling); the
 * production build leaves the demo code out.
 */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/app.js';
import { browserEnvironment } from './app/environment.js';
import './styles.css';

const root = document.getElementById('root');
if (root === null) throw new Error('lease-fence dashboard: no #root element in index.html');

async function environment() {
  const env = browserEnvironment();
  const demo = new URLSearchParams(window.location.search).get('demo');
  if ((import.meta.env.DEV || import.meta.env.VITE_LEASE_FENCE_DEMO === '1') && demo !== null) {
    const { demoEnvironment } = await import('./dev/demo-environment.js');
    const search = new URLSearchParams(window.location.search);
    const history = Number(search.get('history'));
    return demoEnvironment(
      env,
      Number(demo) || 1,
      Number(search.get('rate')) || undefined,
      history > 0 && history <= 1 ? history : undefined,
    );
  }
  return env;
}

void environment().then((env) => {
  createRoot(root).render(
    <StrictMode>
      <App env={env} />
    </StrictMode>,
  );
});
