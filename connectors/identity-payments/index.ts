export * from '../errors';
export * from './client';
export * from './money';
export * from './token-cache';
export * from './wire/errors';
export * from './wire/schemas';
