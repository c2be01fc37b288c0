/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** Set to `1` at build time to keep the synthetic `?demo=<seed>` mode in a production build (profiling only). */
  readonly VITE_LEASE_FENCE_DEMO?: string;
}
