# syntax=docker/dockerfile:1
# Multi-stage: compile TypeScript and build the web console with dev dependencies, then make the
# production folder with deploy/production-tree.sh (the same recipe deploy/smoke.sh tests on every CI
# run: compiled dist/ and the production dependencies), and run it as the unprivileged `node` user.
# Data (embedded database, secrets) lives in /data.
# No install scripts anywhere: every native module ships its binaries in its packages (docs/getting-started.md, "Install").

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY migrations ./migrations
COPY web ./web
RUN npm run build
COPY deploy/production-tree.sh ./deploy/
RUN sh deploy/production-tree.sh /app /production

# deploy/smoke.sh reads this stage's ENV and CMD and starts its production folder with exactly them.
FROM node:20-bookworm-slim
# MALLOC_MMAP_THRESHOLD_: malloc returns freed large blocks to the system (src/platform/node-flags.ts).
ENV NODE_ENV=production \
    MALLOC_MMAP_THRESHOLD_=131072 \
    DATA_DIR=/data \
    PORT=8080
WORKDIR /app
COPY --from=build /production ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--max-semi-space-size=32", "dist/src/main.js"]
