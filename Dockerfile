# syntax=docker/dockerfile:1
# The service as an image: compiled in one stage, run in another with production dependencies only.
#   docker build -t optics-catalog .
#   docker run -p 8080:8080 -e AUTH_MODE=demo optics-catalog        (to try it: demo data, open to anyone)
#   docker run -p 8080:8080 -e AUTH_MODE=jwt -e AUTH_JWKS_URL=… -e DATABASE_URL=postgres://… optics-catalog
# Without AUTH_MODE the image stops at once and says which of the two to choose. compose.yaml runs it with
# PostgreSQL and an identity provider, to try the signed-in desk.

# Node.js 24 (the current LTS), Debian bookworm, slim: pinned by digest so a rebuild gets the same base; to move
# to a newer one, `docker buildx imagetools inspect node:24-bookworm-slim` prints the digest to put here.
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY web ./web
RUN npm run build

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    SEARCH_INDEX_SNAPSHOT_DIR=/var/cache/optics-catalog/search-index
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The embedded database's directory (unused with DATABASE_URL), owned by the image's unprivileged user.
# The search index's snapshot (a restart restores the index from it instead of reading every table), likewise.
RUN mkdir -p /data /var/cache/optics-catalog && chown node:node /data /var/cache/optics-catalog
USER node
VOLUME ["/data"]
EXPOSE 8080
# Readiness: the database answers and the search index has loaded (or, with a read replica, either server answers).
HEALTHCHECK --interval=10s --timeout=3s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/actuator/health/readiness`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM drains open requests before the process exits (docs/operations.md, Graceful shutdown).
STOPSIGNAL SIGTERM
# The young generation of the service's thread bounded as its search threads' are (docs/operations.md, Memory).
CMD ["node", "--max-semi-space-size=8", "--enable-source-maps", "dist/src/server.js"]
