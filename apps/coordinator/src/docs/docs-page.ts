/**
 * A small self-contained HTML page listing the routes (no external assets, no swagger-ui).
 */
import type { ApiRoute } from './api-doc.js';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/**
 * Escapes `text` and renders its Markdown code spans (`` `x` ``, as the route table and the
 * OpenAPI descriptions write them) as `<code>`; an unpaired backtick stays as it is.
 */
export const renderInline = (text: string): string => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

/** Renders the `/docs` page of `routes`. */
export function renderDocsPage(routes: readonly ApiRoute[]): string {
  const rows = routes
    .map((route) => {
      const statuses = Object.entries(route.replies)
        .map(([status, reply]) => `<li><code>${status}</code> ${renderInline(reply.description)}</li>`)
        .join('');
      return (
        `<tr><td><code>${route.method.toUpperCase()}</code></td><td><code>${escapeHtml(route.path)}</code></td>` +
        `<td>${route.role ?? 'none'}</td><td>${renderInline(route.summary)}<ul>${statuses}</ul></td></tr>`
      );
    })
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>lease-fence coordinator API</title>
<style>body{font:14px/1.45 system-ui,sans-serif;margin:2rem;max-width:72rem}table{border-collapse:collapse;width:100%}
td,th{border-top:1px solid #ddd;padding:.4rem .6rem;vertical-align:top;text-align:left}ul{margin:.3rem 0 0;padding-left:1.1rem}code{font-size:13px}</style>
</head><body>
<h1>lease-fence coordinator API</h1>
<p>JSON over HTTP under <code>/v1</code>, a WebSocket stream at <code>/v1/stream</code>. Send <code>Authorization: Bearer &lt;token&gt;</code>
(role <em>viewer</em> is satisfied by every token). Machine-readable: <a href="/docs/openapi.json">OpenAPI 3.1 document</a>.</p>
<table><thead><tr><th>Method</th><th>Path</th><th>Role</th><th>What it does</th></tr></thead><tbody>
${rows}
</tbody></table>
</body></html>
`;
}
