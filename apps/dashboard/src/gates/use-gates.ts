/** Polls `GET /v1/gates` every {@link GATES_POLL_MILLIS} while mounted (see `./gates-client.ts` for why it polls). */
import { useEffect, useState } from 'react';
import type { DashboardEnvironment } from '../app/environment.js';
import { fetchGates, type GatesResult } from './gates-client.js';

/** How often the gates panel asks the coordinator, in milliseconds. */
export const GATES_POLL_MILLIS = 2_000;

/** The latest answer of `GET /v1/gates`; undefined until the first one. */
export function useGates(env: DashboardEnvironment, token: string): GatesResult | undefined {
  const [result, setResult] = useState<GatesResult | undefined>(undefined);
  useEffect(() => {
    let stopped = false;
    let timer: unknown;
    const controller = new AbortController();
    const poll = async (): Promise<void> => {
      const next = await fetchGates(env.origin, token, env.fetch, controller.signal);
      if (stopped) return;
      setResult(next);
      timer = env.timers.setTimeout(() => void poll(), GATES_POLL_MILLIS);
    };
    void poll();
    return () => {
      stopped = true;
      controller.abort();
      if (timer !== undefined) env.timers.clearTimeout(timer);
    };
  }, [env, token]);
  return result;
}
