export * from './client';
export * from './error-bodies';
export * from './errors';
export * from './money';
export * from './pix-key';
export * from './schemas';
export * from './token-cache';
