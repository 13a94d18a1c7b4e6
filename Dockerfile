# One image for the sandbox, worker, API and migrations; docker-compose.yml picks the command.
# The build stage compiles TypeScript to dist/ (npm run build); the image runs that JavaScript
# with production dependencies only, no compiler or loader (test/integration/build.test.ts runs
# the same commands on the same build).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
# The young generation npm start gives each Node process (scripts/runtime-tuning.ts says why).
ENV NODE_OPTIONS=--max-semi-space-size=32
USER node
CMD ["node", "dist/api/main.js"]
