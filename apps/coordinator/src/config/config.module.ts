/** Makes the parsed configuration and the process logger injectable everywhere. */
import { type DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { LOGGER } from '../logging/logger.js';
import type { Config } from './config.js';
import { CONFIG } from './config.tokens.js';

/** Global value providers for {@link CONFIG} and {@link LOGGER}. */
@Module({})
export class ConfigModule {
  /** @param config - Parsed once by `main.ts`. @param logger - The process logger. */
  static forRoot(config: Config, logger: Logger): DynamicModule {
    return {
      module: ConfigModule,
      global: true,
      providers: [
        { provide: CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
      ],
      exports: [CONFIG, LOGGER],
    };
  }
}
