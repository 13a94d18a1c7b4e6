import pino from 'pino';

// CPFs are 11 digits; we keep the middle six visible, the way Brazilian receipts print them
// (***.456.789-**), so logs stay useful without carrying whole documents.
export function maskCpf(cpf: string): string {
  const d = cpf.replace(/\D/g, '');
  if (d.length !== 11) return '***';
  return `***.${d.slice(3, 6)}.${d.slice(6, 9)}-**`;
}

export function maskName(name: string): string {
  return name
    .split(/\s+/)
    .filter(Boolean)
    .map((part) => `${part[0]}***`)
    .join(' ');
}

/** Replaces every 11-digit run (a CPF, formatted or not) in free text with its masked form. */
export function maskCpfsIn(text: string): string {
  return text.replace(/\d{3}\.?\d{3}\.?\d{3}-?\d{2}/g, (m) => maskCpf(m));
}

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
