/**
 * `GET /v1/stream` without a WebSocket upgrade. The stream itself is answered on the HTTP
 * server's `upgrade` event ({@link StreamGateway}), before Express; a plain request reaches here
 * and is told how to connect instead of getting a bare 404.
 */
import { Controller, Get, HttpException } from '@nestjs/common';
import { STREAM_PATH } from './stream.gateway.js';

/** HTTP 426 Upgrade Required (RFC 9110 § 15.5.22; Nest's HttpStatus has no name for it). */
const UPGRADE_REQUIRED = 426;

/** 426 Upgrade Required for a plain `GET /v1/stream`. */
@Controller(STREAM_PATH.slice(1))
export class StreamUpgradeRequiredController {
  /**
   * @throws HttpException 426 (`error: 'upgrade-required'`), always, naming how to connect.
   */
  @Get()
  upgradeRequired(): never {
    throw new HttpException(
      `${STREAM_PATH} is a WebSocket: connect with a WebSocket client (GET with Upgrade: websocket), ${STREAM_PATH}?after=<position>&token=<viewer token>`,
      UPGRADE_REQUIRED,
    );
  }
}
