import pino from 'pino';
import pretty, { type PrettyOptions, prettyFactory } from 'pino-pretty';

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

// One line per event, led by the time, level and process name; the service field repeats the name.
const prettyOptions: PrettyOptions = {
  singleLine: true,
  translateTime: 'SYS:HH:MM:ss.l',
  ignore: 'pid,hostname,service',
};

/**
 * JSON lines, except on a terminal, where a person reads them: there, readable lines. A log
 * collector (a pipe, a file, `npm start` reading its parts) always gets JSON.
 */
export function createLogger(name: string, level = process.env.LOG_LEVEL ?? 'info') {
  const options: pino.LoggerOptions = {
    name,
    level,
    redact: { paths: redactPaths, censor: '[redacted]' },
    base: { service: name },
  };
  // Synchronous writes: the last lines before an exit are not lost, and a reader that went away
  // (EPIPE) only silences the log. Buffered writes are flushed at exit by a loop that retries
  // EPIPE forever, so a process whose starter was killed could never exit.
  return pino(
    options,
    process.stdout.isTTY
      ? pretty({ ...prettyOptions, sync: true })
      : pino.destination({ dest: 1, sync: true }),
  );
}

/** Turns one JSON log line into the readable line a terminal shows (for `npm start`). */
export function prettyLogLine(): (jsonLine: string) => string {
  const format = prettyFactory(prettyOptions);
  return (line) => format(line).trimEnd();
}

export type Logger = pino.Logger;
