/**
 * `GET /docs` (HTML route list) and `GET /docs/openapi.json` (OpenAPI 3.1). No token needed.
 */
import { Controller, Get, Header, Inject } from '@nestjs/common';
import type { z } from 'zod';
import { ApiDoc, type ApiRoute } from './api-doc.js';
import { renderDocsPage } from './docs-page.js';
import { buildOpenApiDocument } from './openapi-document.js';

/** Injection token of the route table and named schemas the docs are built from (`docs/docs.module.ts`). */
export const DOCS_SOURCE = Symbol('lease-fence:docs-source');

/** What the docs are built from. */
export interface DocsSource {
  readonly routes: readonly ApiRoute[];
  readonly namedSchemas: Readonly<Record<string, z.ZodType>>;
}

/** Serves the API documentation, built once, when the application starts. */
@Controller('docs')
export class DocsController {
  private readonly document: Record<string, unknown>;
  private readonly page: string;

  constructor(@Inject(DOCS_SOURCE) source: DocsSource) {
    this.document = buildOpenApiDocument(source.routes, source.namedSchemas, '0.1.0');
    this.page = renderDocsPage(source.routes);
  }

  /** The HTML page. */
  @Get()
  @Header('content-type', 'text/html; charset=utf-8')
  @ApiDoc({
    operationId: 'docsPage',
    summary: 'This API as a small HTML page.',
    replies: { 200: { description: 'HTML.', schemas: 'html' } },
  })
  htmlPage(): string {
    return this.page;
  }

  /** The OpenAPI document. */
  @Get('openapi.json')
  @ApiDoc({
    operationId: 'openApiDocument',
    summary: 'This API as an OpenAPI 3.1 document.',
    replies: { 200: { description: 'OpenAPI document.' } },
  })
  openApi(): Record<string, unknown> {
    return this.document;
  }
}
