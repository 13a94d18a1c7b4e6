// The API Pix connector's public face: the rest of pixflow builds it here and speaks to it in
// pixflow's types (../types.ts); its wire stays inside this folder.

export type { ApiPixCallEvent, ApiPixLogger } from './client';
export {
  API_PIX_CAPABILITIES,
  type ApiPixConnector,
  type ApiPixOptions,
  createApiPixConnector,
} from './connector';
export { readPixNotifications } from './notifications';
export { fromApiPixTxid, returnIdFor, toApiPixTxid } from './txid';
export { PROBLEM_TYPE_BASE, PROBLEM_TYPES } from './wire/errors';
