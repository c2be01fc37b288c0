/**
 * A bare agent link client for black-box tests (`/v1/agent`, the protocol's frames, no SDK):
 * sends raw frames and collects the coordinator's replies by id.
 */
import { AGENT_LINK_PATH, AGENT_LINK_SUBPROTOCOL, type AgentReplyFrame } from '@lease-fence/protocol';
import { WebSocket } from 'ws';

/** An open agent link. */
export interface RawAgentLink {
  readonly socket: WebSocket;
  /** Every reply frame received, in arrival order. */
  readonly replies: readonly AgentReplyFrame[];
  /** Sends a frame (an object is JSON-encoded; a string goes as is). */
  send(frame: unknown): void;
  /** Resolves with the first reply for `id` (past or future). */
  reply(id: number | null): Promise<AgentReplyFrame>;
  /** Sends `{ id, op, resource, body }` and resolves with its reply. */
  request(id: number, op: string, resource: string, body: unknown): Promise<AgentReplyFrame>;
  close(): Promise<void>;
}

/** Opens an agent link with `token` on the coordinator at `wsUrl` (`ws://127.0.0.1:<port>`). */
export function openRawAgentLink(wsUrl: string, token: string): Promise<RawAgentLink> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${wsUrl}${AGENT_LINK_PATH}`, AGENT_LINK_SUBPROTOCOL, {
      headers: { authorization: `Bearer ${token}` },
      perMessageDeflate: false,
    });
    const replies: AgentReplyFrame[] = [];
    const waiters: { id: number | null; resolve: (reply: AgentReplyFrame) => void }[] = [];
    socket.on('message', (data) => {
      const reply = JSON.parse(data.toString()) as AgentReplyFrame;
      replies.push(reply);
      for (const waiter of waiters.filter((each) => each.id === reply.id)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(reply);
      }
    });
    socket.once('error', reject);
    socket.once('open', () => {
      const send = (frame: unknown): void => socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
      const reply = (id: number | null): Promise<AgentReplyFrame> => {
        const seen = replies.find((each) => each.id === id);
        return seen !== undefined
          ? Promise.resolve(seen)
          : new Promise((settle) => waiters.push({ id, resolve: settle }));
      };
      resolve({
        socket,
        replies,
        send,
        reply,
        request: (id, op, resource, body) => {
          send({ id, op, resource, body });
          return reply(id);
        },
        close: () =>
          new Promise<void>((settle) => {
            if (socket.readyState === WebSocket.CLOSED) return settle();
            socket.once('close', () => settle());
            socket.close(1000);
          }),
      });
    });
  });
}
