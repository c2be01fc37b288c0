/** `/docs` and `/docs/openapi.json`. */
import { Module } from '@nestjs/common';
import { DocsController } from './docs.controller.js';

/** API documentation. */
@Module({ controllers: [DocsController] })
export class DocsModule {}
