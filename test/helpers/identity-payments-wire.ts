// The identity-payments connector's insides, for the tests that check its wire against the
// sandbox (test/contract) and its client alone: the rest of pixflow may not import them.
export * from '../../connectors/errors';
export * from '../../connectors/identity-payments/client';
export * from '../../connectors/identity-payments/money';
export * from '../../connectors/identity-payments/wire/errors';
export * from '../../connectors/identity-payments/wire/schemas';
export * from '../../connectors/token-cache';
