/**
 * `GET /v1/events?after=&limit=`: history straight from the event log (it is readable while
 * the coordinator is still recovering).
 */
import { Controller, Get, Inject, Query, UseGuards } from '@nestjs/common';
import type { EventLog, RecordedEvent } from '@lease-fence/coordinator-core';
import { type EventsReply, EventsQuerySchema, EventsReplySchema } from '@lease-fence/protocol';
import { ViewerGuard } from '../auth/role.guards.js';
import { ApiDoc, READ_REPLIES, REPLIES } from '../docs/api-doc.js';
import { EVENT_LOG } from '../event-log/event-log.tokens.js';
import { parseInput } from '../http/invalid-request.error.js';

/** Reads the log by position. */
@Controller('v1/events')
export class EventsController {
  constructor(@Inject(EVENT_LOG) private readonly log: EventLog) {}

  /** Events after position `after` (0 = from the start), at most `limit`, and the head (the log's version, read after the events). */
  @Get()
  @UseGuards(ViewerGuard)
  @ApiDoc({
    operationId: 'listEvents',
    summary: 'History from the log: events after position `after`, at most `limit`, and the head position.',
    query: EventsQuerySchema,
    replies: {
      200: { description: 'Events in log order.', schemas: [EventsReplySchema] },
      400: REPLIES.badInput,
      ...READ_REPLIES,
    },
  })
  async list(@Query() query: unknown): Promise<EventsReply> {
    const { after, limit } = parseInput(EventsQuerySchema, query, 'query');
    const events: RecordedEvent[] = [];
    for await (const recorded of this.log.read({ from: after + 1, limit })) events.push(recorded);
    return { events, head: await this.log.version() };
  }
}
