# Tidal's controller image: `docker build -t <registry>/tidal/controller:<version> .` (or podman/buildah bud).
# `npm run image` assembles the same contents without Docker or Docker Hub (dev/image.ts).
#
# Stage 1 builds dist/ (compiled controller + prebuilt workflow bundle) with the dev dependencies, then keeps only the
# production ones. Stage 2 is node:20-slim with those and jemalloc, running as uid 65532 (no shell needed at run time).
# node is PID 1 on purpose, without tini: the controller installs its own SIGTERM/SIGINT handlers (it drains the
# webhook and lets running activities finish), and it starts no child processes, so there are no zombies to reap.
FROM node:20-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY api ./api
COPY resources ./resources
COPY kube ./kube
COPY registry ./registry
COPY pki ./pki
COPY workflows ./workflows
COPY activities ./activities
COPY watcher ./watcher
COPY webhook ./webhook
COPY workers ./workers
RUN npm run build && npm prune --omit=dev --no-audit --no-fund
# The Temporal SDK's native module ships the Rust sources and every platform's build; keep this platform's only
# (what `npm run image` keeps too): ~130 MB less.
RUN cd node_modules/@temporalio/core-bridge \
 && rm -rf sdk-core src bridge-macros scripts ts \
 && find releases -mindepth 1 -maxdepth 1 ! -name "$(uname -m)-unknown-linux-gnu" -exec rm -rf {} +

FROM node:20-bookworm-slim
# jemalloc preloaded: glibc's malloc keeps what a burst of work freed, jemalloc returns it (dev/allocator.ts;
# docs/benchmarks.md); it gives freed pages back at once (and runs its background thread, as
# measured). Found by its soname, so on any architecture.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjemalloc2 \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production LD_PRELOAD=libjemalloc.so.2 MALLOC_CONF=background_thread:true,dirty_decay_ms:0
WORKDIR /app
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/controller.js /src/dist/workflow-bundle.js ./dist/
RUN printf '{"name":"tidal","private":true,"type":"module"}\n' > package.json
USER 65532:65532
EXPOSE 8443 9464
# V8 reads its young generation's size only at start: workers/node-flags.ts says why 4 MiB.
ENTRYPOINT ["node", "--max-semi-space-size=4", "dist/controller.js"]
