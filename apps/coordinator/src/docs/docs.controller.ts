/**
 * `GET /docs` (HTML route list) and `GET /docs/openapi.json` (OpenAPI 3.1). No token needed.
 */
import { Controller, Get, Header } from '@nestjs/common';
import { renderDocsPage } from './docs-page.js';
import { buildOpenApiDocument } from './openapi-document.js';

const DOCUMENT = buildOpenApiDocument('0.1.0');
const PAGE = renderDocsPage();

/** Serves the API documentation, built once at module load. */
@Controller('docs')
export class DocsController {
  /** The HTML page. */
  @Get()
  @Header('content-type', 'text/html; charset=utf-8')
  page(): string {
    return PAGE;
  }

  /** The OpenAPI document. */
  @Get('openapi.json')
  openApi(): Record<string, unknown> {
    return DOCUMENT;
  }
}
