/** `/docs` and `/docs/openapi.json`. */
import { Module } from '@nestjs/common';
import { API_ROUTES, NAMED_SCHEMAS } from './api-routes.js';
import { DOCS_SOURCE, DocsController, type DocsSource } from './docs.controller.js';

/** API documentation, built from the controllers' route declarations (`docs/api-routes.ts`). */
@Module({
  controllers: [DocsController],
  providers: [
    { provide: DOCS_SOURCE, useValue: { routes: API_ROUTES, namedSchemas: NAMED_SCHEMAS } satisfies DocsSource },
  ],
})
export class DocsModule {}
