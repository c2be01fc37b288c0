/**
 * The agent link's socket port ({@link AgentSessionSocket}) over a `ws` WebSocket and the TCP
 * socket it writes to. `ws` has no public cork, so cork and uncork go to the TCP socket itself:
 * the socket of the HTTP `upgrade` event, which is also the upgrade request's `request.socket`
 * and the one `ws` writes every frame to.
 */
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { AgentSessionSocket } from './agent-session.js';

/**
 * The session's view of one agent link connection.
 * @param client - The accepted WebSocket (`ws`).
 * @param connection - The TCP socket `client` writes to (the upgrade request's `socket`).
 * @returns A port whose `bufferedAmount` is `ws`'s (bytes in the TCP socket's writable buffer,
 *   corked ones included) and whose `cork` / `uncork` are the TCP socket's (counted when nested).
 */
export const agentSessionSocketOf = (client: WebSocket, connection: Duplex): AgentSessionSocket => ({
  get readyState() {
    return client.readyState;
  },
  get bufferedAmount() {
    return client.bufferedAmount;
  },
  send: (text) => client.send(text),
  pause: () => client.pause(),
  resume: () => client.resume(),
  close: (code, reason) => client.close(code, reason),
  terminate: () => client.terminate(),
  cork: () => connection.cork(),
  uncork: () => connection.uncork(),
});
