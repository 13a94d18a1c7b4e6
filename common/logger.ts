import pino from 'pino';

export { maskCpf, maskCpfsIn, maskName } from './mask';

const redactPaths = [
  'access_token',
  'client_secret',
  'password',
  'authorization',
  'headers.authorization',
  'headers["x-service-api-key"]',
  'req.headers.authorization',
  'req.headers["x-service-api-key"]',
  'apiKey',
  'token',
  'secret',
];

export function createLogger(name: string, level = process.env.LOG_LEVEL ?? 'info') {
  return pino({
    name,
    level,
    redact: { paths: redactPaths, censor: '[redacted]' },
    base: { service: name },
  });
}

export type Logger = pino.Logger;
