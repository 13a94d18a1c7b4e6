# One image for the sandbox, worker and api; docker-compose.yml picks the command.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci && npm cache clean --force
COPY . .
ENV NODE_ENV=production
# The young generation npm start gives each Node process (scripts/runtime-tuning.ts says why).
ENV NODE_OPTIONS=--max-semi-space-size=32
USER node
CMD ["node", "--import", "tsx", "api/main.ts"]
