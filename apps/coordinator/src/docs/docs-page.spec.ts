import { describe, expect, it } from 'vitest';
import { API_ROUTES } from './api-routes.js';
import { renderDocsPage, renderInline } from './docs-page.js';

describe('renderInline', () => {
  it('renders Markdown code spans as <code> and escapes everything else', () => {
    expect(renderInline('events after `after`, at most `limit` <b>')).toBe(
      'events after <code>after</code>, at most <code>limit</code> &lt;b&gt;',
    );
  });

  it('escapes HTML inside a code span and leaves an unpaired backtick alone', () => {
    expect(renderInline('`<x>` and ` alone')).toBe('<code>&lt;x&gt;</code> and ` alone');
  });
});

describe('renderDocsPage', () => {
  it('shows no raw Markdown backticks', () => {
    const page = renderDocsPage(API_ROUTES);
    expect(page).toContain('<code>after</code>');
    expect(page).not.toContain('`');
  });
});
