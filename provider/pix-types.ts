// The Pix key types, in a module without zod: the withdrawal workflow validates keys too, and
// every module it imports is instantiated per running workflow in the worker's sandbox.
export const PIX_TYPES = ['CPF', 'EMAIL', 'PHONE', 'EVP', 'ACCOUNT'] as const;
