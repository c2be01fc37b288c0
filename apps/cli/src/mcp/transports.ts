/**
 * The MCP server's two transports, from the official SDK: stdio (one session: the process's
 * stdin and stdout) and Streamable HTTP (one session per `Mcp-Session-Id`, on node:http). A
 * session ends when stdin closes, when the client deletes its HTTP session, or when the process
 * is asked to stop; its leases are released then.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { LeaseFenceMcpSession } from './server.js';

/** Makes the server of one new session. */
export type McpSessionFactory = () => LeaseFenceMcpSession;

/**
 * Serves one session over this process's stdin/stdout. Resolves once the session has ended:
 * stdin closed (the client went away) or `stop` aborted; its leases are released by then.
 */
export async function serveStdio(newSession: McpSessionFactory, stop: AbortSignal): Promise<void> {
  const session = newSession();
  const transport = new StdioServerTransport();
  // The SDK's transport closes itself when stdin cannot be read as messages (one longer than its
  // 10 MiB buffer): without this the session, and with it every lease, ended without a word.
  let unreadable: Error | undefined;
  transport.onerror = (error) => {
    if (error.message.startsWith('ReadBuffer')) unreadable ??= error;
  };
  const ended = new Promise<void>((resolve) => {
    const end = (): void => resolve();
    // The SDK's stdio transport does not watch for the end of stdin; a client that exits closes it.
    process.stdin.once('end', end);
    process.stdin.once('close', end);
    stop.addEventListener('abort', end, { once: true });
    transport.onclose = end;
  });
  await session.server.connect(transport);
  await ended;
  await session.close();
  if (unreadable !== undefined)
    process.stderr.write(
      `lease-fence mcp: session ended: a message from the MCP client could not be read (${unreadable.message}); its leases were released\n`,
    );
  // stdin stays open when the process is stopped by a signal; an open stdin would keep it alive.
  process.stdin.destroy();
}

/** Options of {@link serveStreamableHttp}. */
export interface StreamableHttpOptions {
  /** Interface to bind. Loopback names get DNS-rebinding protection (the `Host` header is checked). */
  readonly host: string;
  /** Port to listen on (0 = any free port). */
  readonly port: number;
  /**
   * A session with no call in flight for this long is ended and its leases released,
   * milliseconds: a client that went away without `DELETE` must not keep its leases renewed for
   * ever. Its open notification stream (GET) does not count: a vanished client's can look open
   * for hours. A quiet client that is still there loses its session too (its next request is
   * answered 404 and it initializes again). Integer ≥ 1.
   */
  readonly sessionIdleMillis: number;
  /**
   * The most sessions kept at once (each holds its own server and leases until it is deleted or
   * idle past `sessionIdleMillis`): a client that initializes for every call without `DELETE`
   * would otherwise grow the process without bound. An `initialize` beyond it is answered 503.
   * Integer ≥ 1.
   */
  readonly maxSessions: number;
}

/** A listening Streamable HTTP MCP endpoint. */
export interface StreamableHttpEndpoint {
  /** `http://host:port/mcp`. */
  readonly url: string;
  /** Sessions open now. */
  readonly sessions: () => number;
  /** Ends every session (releasing its leases) and stops listening. */
  close(): Promise<void>;
}

/** A live HTTP session and whether its client is still there. */
interface OpenSession {
  readonly transport: StreamableHTTPServerTransport;
  readonly session: LeaseFenceMcpSession;
  /** Calls of the session not answered yet (its GET notification stream is not counted). */
  openRequests: number;
  /** When the last open request ended (monotonic milliseconds, `performance.now`). */
  idleSinceMillis: number;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
/** The path the MCP endpoint is served on. */
export const MCP_PATH = '/mcp';

/**
 * Serves MCP over Streamable HTTP at `/mcp`: a POST without `Mcp-Session-Id` starts a session
 * (its `initialize`), later requests carry the id, `DELETE` ends it (and releases its leases), and
 * so does `sessionIdleMillis` without any request open.
 */
export async function serveStreamableHttp(
  newSession: McpSessionFactory,
  options: StreamableHttpOptions,
): Promise<StreamableHttpEndpoint> {
  if (!Number.isSafeInteger(options.sessionIdleMillis) || options.sessionIdleMillis < 1)
    throw new RangeError(
      `serveStreamableHttp: sessionIdleMillis must be a positive integer (milliseconds), got ${String(options.sessionIdleMillis)}`,
    );
  if (!Number.isSafeInteger(options.maxSessions) || options.maxSessions < 1)
    throw new RangeError(
      `serveStreamableHttp: maxSessions must be a positive integer, got ${String(options.maxSessions)}`,
    );
  const sessions = new Map<string, OpenSession>();
  /** Requests without a session id being handled now: each may start a session. */
  let starting = 0;
  /** `Host` values a loopback endpoint accepts (DNS-rebinding protection); read once listening, when the port is known. */
  const allowedHosts = (): string[] =>
    LOOPBACK.has(options.host) ? [...LOOPBACK].map((host) => `${host.includes(':') ? `[${host}]` : host}:${port}`) : [];

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? '/', 'http://mcp').pathname;
    if (path !== MCP_PATH) {
      plain(response, 404, `not found: the MCP endpoint is ${MCP_PATH}`);
      return;
    }
    const sessionId = request.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const open = sessions.get(sessionId);
      if (open === undefined) {
        jsonRpcError(
          response,
          404,
          -32001,
          `session not found: ${sessionId} (ended or never started); initialize again`,
        );
        return;
      }
      // Every call of the session counts, not only its initialize: a session in use is not idle.
      // Its GET notification stream does not: it stays open for as long as the client's TCP
      // connection looks alive from here, which a vanished client's can for hours.
      if (request.method !== 'GET') track(open, response);
      await open.transport.handleRequest(request, response);
      return;
    }
    if (sessions.size + starting >= options.maxSessions) {
      jsonRpcError(
        response,
        503,
        -32000,
        `${options.maxSessions} MCP sessions are open, the most this server keeps (--max-sessions): end one (DELETE ${MCP_PATH} with its Mcp-Session-Id) or wait until one is idle past --session-idle-timeout`,
      );
      return;
    }
    starting += 1;
    try {
      await startSession(request, response);
    } finally {
      starting -= 1;
    }
  };

  /** Handles a request without a session id: an `initialize` starts a session. */
  const startSession = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const session = newSession();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        const open: OpenSession = { transport, session, openRequests: 0, idleSinceMillis: performance.now() };
        sessions.set(id, open);
        track(open, response);
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
        void session.close();
      },
      ...(allowedHosts().length === 0 ? {} : { enableDnsRebindingProtection: true, allowedHosts: allowedHosts() }),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      void session.close();
    };
    await session.server.connect(transport);
    await transport.handleRequest(request, response);
    // A first request that was not an initialize starts no session: drop its server at once.
    if (transport.sessionId === undefined || !sessions.has(transport.sessionId)) await session.close();
  };

  /** Counts `response` as open on `open` until it ends (an SSE stream stays open while the client listens). */
  const track = (open: OpenSession, response: ServerResponse): void => {
    open.openRequests += 1;
    response.once('close', () => {
      open.openRequests -= 1;
      open.idleSinceMillis = performance.now();
    });
  };
  const sweep = setInterval(
    () => {
      const now = performance.now();
      for (const [id, open] of sessions) {
        if (open.openRequests > 0 || now - open.idleSinceMillis < options.sessionIdleMillis) continue;
        sessions.delete(id);
        void open.transport.close().finally(() => open.session.close());
      }
    },
    Math.min(options.sessionIdleMillis, 1000),
  );
  sweep.unref();

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        jsonRpcError(
          response,
          500,
          -32603,
          `internal error: ${error instanceof Error ? error.message : String(error)}`,
        );
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostInUrl = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${hostInUrl}:${port}${MCP_PATH}`,
    sessions: () => sessions.size,
    close: async () => {
      clearInterval(sweep);
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map(({ session }) => session.close()));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

const plain = (response: ServerResponse, status: number, text: string): void => {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${text}\n`);
};

const jsonRpcError = (response: ServerResponse, status: number, code: number, message: string): void => {
  response
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
};
