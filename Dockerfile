# syntax=docker/dockerfile:1
# Build stage: dev dependencies and the toolchain better-sqlite3 compiles with. The steps are the
# ones CI runs (npm ci, build), so a green CI is a fair proxy for a good image.
FROM node:20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.sh ./scripts/build.sh
COPY src ./src
COPY migrations ./migrations
RUN npm run build \
 && npm prune --omit=dev

# Runtime stage: production dependencies (with the compiled better-sqlite3), dist/ and migrations/.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    DATABASE_PATH=/data/mirror.db \
    HOST=0.0.0.0 \
    PORT=8000
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/migrations ./migrations
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8000
# No curl in the slim image: Node's own fetch asks /healthz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--max-semi-space-size=2", "dist/cli.js", "start"]
