/**
 * The EventLog behind the {@link EVENT_LOG} token: a factory provider that opens the adapter
 * the configuration names, and closes it on application shutdown, after the coordinator has
 * finished its in-flight appends (the coordinator module is shut down first: it imports this one).
 */
import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { EventLog } from '@lease-fence/coordinator-core';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.tokens.js';
import { EVENT_LOG } from './event-log.tokens.js';
import { openEventLog } from './open-event-log.js';

/** Closes the log when the application shuts down. */
class EventLogCloser implements OnApplicationShutdown {
  constructor(@Inject(EVENT_LOG) private readonly log: EventLog) {}

  /** Closes the log (idempotent); subscriptions end. */
  async onApplicationShutdown(): Promise<void> {
    await this.log.close();
  }
}

/** Provides {@link EVENT_LOG}; global so the stream and history routes can read the log. */
@Global()
@Module({
  providers: [
    { provide: EVENT_LOG, inject: [CONFIG], useFactory: (config: Config): Promise<EventLog> => openEventLog(config) },
    EventLogCloser,
  ],
  exports: [EVENT_LOG],
})
export class EventLogModule {}
