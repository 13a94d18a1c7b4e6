// The connector's public face: the rest of pixflow builds it here and speaks to it in pixflow's
// types (../types.ts); its wire stays inside this folder.

export {
  type AuthHeaderSetting,
  type ConformanceReport,
  findingText,
  type LivenessIdFieldSetting,
  type ProviderTarget,
  type ReceiptFormatSetting,
  runConformance,
} from './conformance';
export {
  createIdentityPaymentsConnector,
  IDENTITY_PAYMENTS_CAPABILITIES,
  type IdentityPaymentsConnector,
  type IdentityPaymentsOptions,
} from './connector';
export {
  notificationPointOf,
  partnerIdOf,
  readLivenessCallback,
  readPaymentNotification,
} from './notifications';
export { OPEN_POINT_IDS, OPEN_POINTS, type OpenPointId, type Side } from './open-points';
