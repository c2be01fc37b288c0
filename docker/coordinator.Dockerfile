# syntax=docker/dockerfile:1
#
# The lease-fence coordinator (serves the dashboard too). Build from the repository root:
#   docker build -f docker/coordinator.Dockerfile -t lease-fence/coordinator .
# or through docker/compose.yml. Not exercised by CI here (no Docker engine on the CI machines);
# see docs/eventstoredb.md and docs/operations.md § "Docker and compose".
#
# Stage 1 builds every package the coordinator needs with the full dev toolchain (TypeScript, Nx,
# Vite) and then installs the coordinator's production dependencies only. better-sqlite3 is a
# native module: when no prebuilt binary can be downloaded it compiles from source, hence
# python3, make and g++ in this stage only; of its build only the addon itself goes on to the
# runtime stage (not the SQLite sources, object files, static library or test extension).
#
# Base image: Node 22, the maintained LTS line (Node 20 reached its end of life in April 2026).
# Pin it by digest for reproducible builds: CI resolves the tag's current digest with
#   docker buildx imagetools inspect node:22-bookworm-slim --format '{{json .Manifest.Digest}}'
# and builds with --build-arg NODE_IMAGE=node:22-bookworm-slim@sha256:<digest> (it could not be
# resolved where this file was written: no registry access).

ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
ENV NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false CI=true
WORKDIR /src

# Manifests first, so the dependency layer is cached until a manifest or the lockfile changes.
COPY package.json package-lock.json .npmrc nx.json tsconfig.base.json eslint.config.mjs ./
COPY libs/lease-fence/package.json libs/lease-fence/
COPY libs/protocol/package.json libs/protocol/
COPY libs/coordinator-core/package.json libs/coordinator-core/
COPY libs/event-log-sqlite/package.json libs/event-log-sqlite/
COPY libs/event-log-eventstoredb/package.json libs/event-log-eventstoredb/
COPY libs/client/package.json libs/client/
COPY libs/gate-sql/package.json libs/gate-sql/
COPY libs/dashboard-model/package.json libs/dashboard-model/
COPY apps/cli/package.json apps/cli/
COPY apps/coordinator/package.json apps/coordinator/
COPY apps/dashboard/package.json apps/dashboard/
COPY apps/demo/package.json apps/demo/
COPY apps/gate/package.json apps/gate/
COPY test/package.json test/
RUN npm ci --no-audit --no-fund

COPY libs libs
COPY apps apps
RUN npx nx run-many -t build --projects=@lease-fence/coordinator,@lease-fence/dashboard --outputStyle=stream

# The runtime tree: production dependencies of the coordinator and its workspace libraries
# (linked from node_modules), each package's package.json and dist, and the dashboard build.
RUN npm ci --omit=dev --workspace=@lease-fence/coordinator --no-audit --no-fund \
 && mkdir -p /app \
 && cp -a package.json node_modules /app/ \
 && cd /app/node_modules/better-sqlite3 \
 && mv build/Release/better_sqlite3.node /tmp/better_sqlite3.node \
 && rm -rf build deps src binding.gyp \
 && mkdir -p build/Release && mv /tmp/better_sqlite3.node build/Release/ \
 && cd /src \
 && for pkg in libs/lease-fence libs/protocol libs/coordinator-core libs/event-log-sqlite libs/event-log-eventstoredb apps/coordinator; do \
      mkdir -p "/app/$pkg" && cp -a "$pkg/package.json" "$pkg/dist" "/app/$pkg/"; \
    done \
 && mkdir -p /app/apps/dashboard && cp -a apps/dashboard/dist /app/apps/dashboard/

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    LEASE_FENCE_DATA_DIR=/var/lib/lease-fence \
    LEASE_FENCE_DASHBOARD_DIR=/app/apps/dashboard/dist
WORKDIR /app
COPY --from=build /app /app
RUN mkdir -p /var/lib/lease-fence && chown node:node /var/lib/lease-fence
USER node
EXPOSE 3000
# Liveness, not readiness: /healthz answers 200 while the process serves. /readyz is for load
# balancers and orchestrators' readiness probes: it answers 503 while recovering, while the event
# log is unreachable, and forever on a standby (LEASE_FENCE_ROLE=standby), which is healthy.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "apps/coordinator/dist/main.js"]
