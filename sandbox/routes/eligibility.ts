import { isValid as isValidCpf } from '@fnando/cpf';
import express, { Router } from 'express';
import { z } from 'zod';
import { type EligibilityAnswer, eligibilityRequestSchema, impededReasons } from '../../eligibility/contract';
import { signedJsonEndpoint } from '../../signed-requests/verify';
import type { SandboxContext } from '../context';
import { answerFor, type EligibilityEmulation } from '../eligibility';
import { parseBody, sendError } from '../http';

// The emulated eligibility service's endpoint (the contract's, signed) and its control endpoints.

const statusSchema = z
  .object({
    cpf: z.string().refine((v) => /^\d{11}$/.test(v) && isValidCpf(v), 'must be a valid CPF, 11 digits'),
    status: z.enum(['eligible', 'impeded']),
    reason: z.enum(impededReasons).optional(),
    until: z.iso.datetime().optional(),
  })
  .strict()
  .refine((v) => v.status === 'eligible' || v.reason !== undefined, {
    path: ['reason'],
    message: 'required when status is impeded',
  });

const outageSchema = z
  .object({
    mode: z.enum(['none', 'error', 'timeout']),
    count: z.number().int().min(1).optional(),
    delayMs: z.number().int().min(0).optional(),
  })
  .strict();

/** Takes one call from the outage; what this call meets. */
function takeOutage(e: EligibilityEmulation): 'none' | 'error' | 'timeout' {
  const { mode, remaining } = e.outage;
  if (mode === 'none') return 'none';
  if (remaining !== null) {
    e.outage.remaining = remaining - 1;
    if (e.outage.remaining <= 0) e.outage = { ...e.outage, mode: 'none', remaining: null };
  }
  return mode;
}

function checkRoute(ctx: SandboxContext) {
  return signedJsonEndpoint({
    secret: ctx.options.eligibilitySecret,
    request: eligibilityRequestSchema,
    refuse: sendError,
    onUnverified: () => {
      ctx.state.eligibility.refused++;
    },
    answer: (question, res) => {
      const e = ctx.state.eligibility;
      e.checks++;
      const outage = takeOutage(e);
      if (outage === 'error') {
        sendError(res, 503, 'Service Unavailable', 'sandbox fault: the registry is unavailable');
        return;
      }
      const answer = answerFor(e, question.cpf);
      if (outage === 'timeout') {
        ctx.timers.set(() => {
          if (!res.writableEnded && !res.destroyed) res.json(answer);
        }, e.outage.delayMs);
        return;
      }
      res.json(answer);
    },
  });
}

/**
 * POST /eligibility/check: the contract's endpoint. Control: POST /sandbox/eligibility/status
 * (a person's answer from now on), POST /sandbox/eligibility/outage, GET /sandbox/eligibility.
 */
export function eligibilityRoutes(ctx: SandboxContext): Router {
  const router = Router();
  router.post('/eligibility/check', ...checkRoute(ctx));
  router.post('/sandbox/eligibility/status', express.json(), (req, res) => {
    const body = parseBody(statusSchema, req.body, res);
    if (!body) return;
    const answer: EligibilityAnswer =
      body.status === 'eligible'
        ? { status: 'eligible' }
        : { status: 'impeded', reason: body.reason ?? 'other', ...(body.until ? { until: body.until } : {}) };
    ctx.state.eligibility.changes.set(body.cpf, answer);
    res.json({ cpf: body.cpf, ...answer });
  });
  router.post('/sandbox/eligibility/outage', express.json(), (req, res) => {
    const body = parseBody(outageSchema, req.body, res);
    if (!body) return;
    const e = ctx.state.eligibility;
    e.outage = { mode: body.mode, remaining: body.count ?? null, delayMs: body.delayMs ?? e.outage.delayMs };
    res.json(e.outage);
  });
  router.get('/sandbox/eligibility', (_req, res) => {
    const e = ctx.state.eligibility;
    res.json({ checks: e.checks, refused: e.refused, outage: e.outage, changed: e.changes.size });
  });
  return router;
}
