// pixflow's API client: the generated types of its OpenAPI document (generated/, by
// `npm run clients:generate`) and the hand-written rest.

export { createPixflowClient, dataOf, type PixflowClient, type PixflowClientOptions } from './client';
export { type EventHeaders, type PixflowEvent, verifyEvent, WebhookVerificationError } from './events';
export type { components, operations, paths, webhooks } from './generated/schema';
export { type FieldError, PixflowProblem, type Problem } from './problem';
export { type RetryOptions, retryAfterMs } from './retry';
