import { createHash } from 'node:crypto';
import { maskCpf } from '../common/mask';
import { cpfHash } from '../common/pii';
import {
  notificationPointOf,
  readLivenessCallback,
  readPaymentNotification,
} from '../connectors/identity-payments';
import {
  type BiometricProgress,
  biometricProgressSignal,
  biometricsWorkflowId,
} from '../contracts/biometrics';
import { depositWorkflowId } from '../contracts/deposit';
import { DEFAULT_BRAND, type ProviderNotification, providerNotificationSignal } from '../contracts/flow';
import { cpfSchema, txidSchema } from '../contracts/flow-input';
import { type LivenessProgress, livenessProgressSignal, onboardingWorkflowId } from '../contracts/onboarding';
import { withdrawalWorkflowId } from '../contracts/withdrawal';
import { transactionIdSchema } from '../contracts/withdrawal-input';
import type { NotificationPoint } from '../db/inbox';
import { Problem, validationProblem } from '../http/problem';

// Turns a parsed provider body into what the inbox stores and which signal goes where. Pure,
// so the router and the tests share one definition of "valid notification" and of its key.

export const NOTIFICATION_POINTS: readonly NotificationPoint[] = ['deposit', 'withdraw', 'liveness'];

export interface ParsedNotification {
  point: NotificationPoint;
  workflowId: string;
  /** The workflow id safe for logs (no whole CPF). */
  logTarget: string;
  signalName: string;
  signalPayload: ProviderNotification | LivenessProgress | BiometricProgress;
  dedupeKey: string;
  /** A field no rule of the connector reads: the progress decides nothing, and an operator is told. */
  unclassified?: { op: string; field: string };
}

export function dedupeKey(parts: string[]): string {
  return createHash('sha256').update(parts.join('|'), 'utf8').digest('hex');
}

/** One URL for all points: the body tells. */
function pointOf(body: Record<string, unknown>): NotificationPoint | undefined {
  return notificationPointOf(body);
}

export function parseNotification(
  pathPoint: NotificationPoint | undefined,
  body: Record<string, unknown>,
  receivedAt: Date,
  /** Liveness callbacks name a CPF; its onboarding's id is a keyed hash of it. */
  piiHashKey: string,
  /**
   * The brand whose account it came through: a deposit or payout it names is that brand's flow
   * (contracts/flow.ts brandScopedId), never another brand's of the same id. Unset: the default.
   */
  brand: string = DEFAULT_BRAND,
): ParsedNotification {
  const point = pathPoint ?? pointOf(body);
  if (!point) {
    throw new Problem(
      400,
      'unknown-notification',
      'Unknown notification',
      'the body is neither a deposit/withdraw message nor a liveness callback',
    );
  }
  return point === 'liveness'
    ? parseLivenessCallback(body, piiHashKey)
    : parseMessage(point, body, receivedAt, brand);
}

function parseLivenessCallback(body: Record<string, unknown>, piiHashKey: string): ParsedNotification {
  const parsed = readLivenessCallback(body);
  if (!parsed.success) throw validationProblem('body', parsed.error);
  const cb = parsed.data;
  // Workflow ids carry the bare 11 digits; tolerate a formatted CPF.
  const cpf = cb.cpf.replace(/[.-]/g, '');
  // A CPF with wrong check digits can never name an onboarding: refused now, not kept pending.
  if (!cpfSchema.safeParse(cpf).success) {
    throw new Problem(400, 'validation-error', 'Request validation failed', 'body.document: must be a CPF');
  }
  // The person and both request ids are part of the dedupe key: a copy joins only a row that
  // says the same thing about the same request, never a look-alike naming someone else.
  const notificationFor = (
    workflowId: string,
    logTarget: string,
    signalName: string,
    signalPayload: LivenessProgress | BiometricProgress,
  ): ParsedNotification => ({
    point: 'liveness',
    workflowId,
    logTarget,
    signalName,
    signalPayload,
    ...(cb.unclassifiedStatus === undefined
      ? {}
      : { unclassified: { op: 'liveness_callback', field: 'status' } }),
    dedupeKey: dedupeKey([
      'liveness',
      workflowId,
      cb.transactionId,
      cb.correlationId,
      cb.step,
      cb.unclassifiedStatus ?? cb.status,
    ]),
  });
  // What both flows hear of a session; the biometrics flow also hears what kind of session it was.
  const progress = {
    statusVerification: cb.status,
    transactionId: cb.transactionId,
    correlationId: cb.correlationId,
    at: cb.at,
  } satisfies LivenessProgress;
  const hashedCpf = cpfHash(cpf, piiHashKey);
  // An approved person's later sessions are biometric identifications: their own flow's news.
  if (cb.type === 'biometric_identification' || cb.step.startsWith('biometric_')) {
    const biometric: BiometricProgress = { ...progress, statusOnboarding: cb.step, actionType: cb.type };
    return notificationFor(
      biometricsWorkflowId(hashedCpf),
      `biometric identification of ${maskCpf(cpf)}`,
      biometricProgressSignal.name,
      biometric,
    );
  }
  return notificationFor(
    onboardingWorkflowId(hashedCpf),
    `onboarding of ${maskCpf(cpf)}`,
    livenessProgressSignal.name,
    progress,
  );
}

function parseMessage(
  point: 'deposit' | 'withdraw',
  body: Record<string, unknown>,
  receivedAt: Date,
  brand: string,
): ParsedNotification {
  const parsed = readPaymentNotification(body);
  if (!parsed.success) throw validationProblem('body', parsed.error);
  const msg = { ...parsed.data, type: parsed.data.kind === 'deposit' ? 'deposit' : 'withdraw' } as const;
  if (msg.type !== point) {
    throw new Problem(
      400,
      'point-mismatch',
      'Notification type does not match its URL',
      `a ${msg.type} message was posted to the ${point} URL`,
    );
  }
  // Ids that can never name one of our workflows are refused now, not kept pending for a day.
  const idCheck = (point === 'deposit' ? txidSchema : transactionIdSchema).safeParse(msg.id);
  if (!idCheck.success) {
    throw new Problem(
      400,
      'validation-error',
      'Request validation failed',
      `body.id: not a valid ${point} id`,
    );
  }
  const workflowId =
    point === 'deposit' ? depositWorkflowId(msg.id, brand) : withdrawalWorkflowId(msg.id, brand);
  const payload: ProviderNotification = {
    type: msg.type,
    action: msg.action,
    id: msg.id,
    receivedAt: receivedAt.toISOString(),
  };
  return {
    point,
    workflowId,
    logTarget: workflowId,
    signalName: providerNotificationSignal.name,
    signalPayload: payload,
    // Another brand's copy of the same id is news of its own flow: its key holds the brand (the
    // default brand's key is as it was before brands, so copies across an upgrade still join).
    dedupeKey: dedupeKey([
      point,
      msg.type,
      msg.id,
      msg.action,
      '',
      ...(brand === DEFAULT_BRAND ? [] : [brand]),
    ]),
  };
}
