/**
 * The dashboard's stream lifecycle: one {@link StreamClient} per viewer token, feeding the
 * {@link DashboardStore}; loading held at a position while the view is paused, released when it
 * follows the head again.
 */
import { useEffect, useEffectEvent, useRef } from 'react';
import { fetchEventsPage } from '../stream/http-client.js';
import { StreamClient, streamUrl } from '../stream/stream-client.js';
import type { DashboardStore } from './dashboard-store.js';
import type { DashboardEnvironment } from './environment.js';

/** Options of {@link useLeaseStream}. */
export interface LeaseStreamOptions {
  readonly env: DashboardEnvironment;
  readonly store: DashboardStore;
  readonly token: string;
  /** Called with the sentence to show when the coordinator refuses the token (HTTP 401 or a refused upgrade). */
  readonly onTokenRefused: (message: string) => void;
  /** Position to hold loading at, or undefined to follow the head (see navigation.ts `ingestTarget`). */
  readonly holdAt: number | undefined;
}

/**
 * Streams the log into `store`: catch up from the start, then live. The token is checked over
 * HTTP first (and after every third failed reconnect) because a browser cannot see why a
 * WebSocket upgrade failed. Closes the client when the token changes or the component unmounts.
 */
export function useLeaseStream({ env, store, token, onTokenRefused, holdAt }: LeaseStreamOptions): void {
  const clientRef = useRef<StreamClient | undefined>(undefined);
  const refused = useEffectEvent((message: string) => onTokenRefused(message));

  useEffect(() => {
    const abort = new AbortController();
    const checkToken = (): void => {
      void fetchEventsPage({
        baseUrl: env.origin,
        token,
        after: 0,
        limit: 1,
        fetch: env.fetch,
        signal: abort.signal,
      }).then((page) => {
        if (abort.signal.aborted) return;
        if (page.ok) store.noteHead(page.head);
        else if (page.reason === 'unauthorized')
          refused('The coordinator refused this viewer token (HTTP 401). Paste a viewer token from its token file.');
        else store.reportProblem(page.message, page.reason === 'invalid-body' ? 'data' : 'connection', env.now());
      });
    };
    const client = new StreamClient({
      url: (after) => streamUrl(env.origin, after, token),
      connect: env.connect,
      timers: env.timers,
      now: env.now,
      onEvent: (recorded) => store.appendEvent(recorded),
      onFrame: (frame) => store.applyFrame(frame, env.now()),
      onHead: (position) => store.noteHead(position),
      onState: (state) => {
        store.setConnection(state);
        if (state.status === 'unauthorized') refused(`The coordinator refused this viewer token (${state.reason}).`);
        // A refused upgrade looks like any failed connection to a browser: ask over HTTP now and then.
        if (state.status === 'reconnecting' && state.attempt % 3 === 0) checkToken();
      },
      onProblem: (message) => store.reportProblem(message, 'data', env.now()),
    });
    clientRef.current = client;
    checkToken();
    client.start();
    return () => {
      abort.abort();
      client.close();
      clientRef.current = undefined;
      store.setHeld(false);
    };
  }, [env, store, token]);

  // Loading follows the view: live follows the head; a paused view holds (memory stays bounded).
  useEffect(() => {
    const client = clientRef.current;
    if (client === undefined) return;
    if (holdAt === undefined) {
      if (client.heldAt !== undefined) client.release();
    } else if (client.heldAt !== holdAt) client.holdAt(holdAt);
    store.setHeld(client.heldAt !== undefined);
  }, [holdAt, store]);
}
