/** The stream's path (a WebSocket; a plain GET there answers 426). */
export const STREAM_PATH = '/v1/stream';
