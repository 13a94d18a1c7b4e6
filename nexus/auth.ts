import { ApplicationFailure } from '@temporalio/common';
import { HandlerError, type OperationContext } from 'nexus-rpc';
import { actingBrand, unknownBrand } from '../api-keys/acting-brand';
import { type KeyCheck, keyChecker, type Principal } from '../api-keys/authenticate';
import type { KeyDirectory } from '../api-keys/directory';
import { grants, type Scope } from '../common/api-key';
import type { Logger } from '../common/logger';
import { inTheClear } from '../common/payload-converter';
import { Problem } from '../http/problem';
import { PIXFLOW_API_KEY_HEADER, PIXFLOW_BRAND_HEADER } from './service';

// Who calls the Nexus service: a pixflow API key, as the API takes one, in the operation's
// `pixflow-api-key` header (nexus/caller.ts sets it from a caller's workflow; an HTTP caller of
// Temporal's Nexus endpoint sends it as an HTTP header, which the frontend passes on). The key is
// checked by the API's own code (api-keys/authenticate.ts: bootstrap keys of API_KEYS, or a usable
// record) and must hold the scopes of the API route the operation stands for. A refusal is a
// handler error the caller's server does not retry: UNAUTHENTICATED (no key, a wrong, revoked or
// expired one), UNAUTHORIZED (a key lacking a scope). The key is never logged. The brand an
// operation acts for follows the API's rules (api-keys/acting-brand.ts): a brand key's own, or the
// one a platform key names in the `pixflow-brand` header.
//
// The API's failed-authentication limit counts per client address; a Nexus task carries no
// address (the request reached Temporal's frontend, which hands the worker its headers and
// input), so the worker keeps no such count: a limit per anything the caller chooses could be
// dodged, and one for everybody would let a stranger lock every caller out. Guessing stays
// hopeless: a record's secret is 256 random bits and production refuses public bootstrap keys.

export interface NexusAuthDeps {
  /** API_KEYS, when the worker is given them: each holds every scope, as on the API. */
  bootstrapKeys: string[];
  directory: KeyDirectory;
  log: Logger;
}

/** The presented key: the header's value, its name in any case, an optional `Bearer ` before it. */
export function presentedKey(headers: Record<string, string>): string | undefined {
  const raw = headerOf(headers, PIXFLOW_API_KEY_HEADER.toLowerCase());
  const key = raw?.replace(/^Bearer\s+/i, '').trim();
  return key ? key : undefined;
}

const causeOf = (p: Problem) =>
  ApplicationFailure.create({
    type: p.slug,
    message: p.detail ? `${p.title}: ${p.detail}` : p.title,
    nonRetryable: true,
    details: [inTheClear({ ...p.extra })],
  });

const unauthenticated = (p: Problem) =>
  new HandlerError('UNAUTHENTICATED', p.detail ? `${p.title}: ${p.detail}` : p.title, {
    cause: causeOf(p),
    retryableOverride: false,
  });

export interface NexusAuth {
  /** The operation's caller, or throws the UNAUTHENTICATED handler error that refuses it. */
  authenticate(ctx: OperationContext): Promise<Principal>;
  /** Throws the UNAUTHORIZED handler error naming the scopes the caller's key lacks. */
  requireScopes(ctx: OperationContext, principal: Principal, scopes: readonly Scope[]): void;
  /**
   * The brand the operation acts for, or throws the handler error that refuses it: BAD_REQUEST
   * (a platform key naming none, an unknown or malformed brand), UNAUTHORIZED (a brand key naming
   * another brand), UNAVAILABLE (the brands cannot be read now).
   */
  brandOf(ctx: OperationContext, principal: Principal): Promise<string>;
}

const headerOf = (headers: Record<string, string>, wanted: string) =>
  Object.entries(headers).find(([name]) => name.toLowerCase() === wanted)?.[1];

export function nexusAuth(deps: NexusAuthDeps): NexusAuth {
  const check = keyChecker(deps);
  const operationOf = (ctx: OperationContext) => `${ctx.service}/${ctx.operation}`;
  return {
    async authenticate(ctx) {
      const presented = presentedKey(ctx.headers);
      let checked: KeyCheck;
      if (!presented) {
        checked = {
          refusal: new Problem(
            401,
            'unauthorized',
            'Missing API key',
            `send a pixflow API key in the operation's ${PIXFLOW_API_KEY_HEADER} header (docs/nexus.md)`,
          ),
        };
      } else {
        try {
          checked = await check(presented);
        } catch (err) {
          // The key records cannot be read now: the caller's server asks again.
          if (err instanceof Problem)
            throw new HandlerError('UNAVAILABLE', err.detail ?? err.title, { cause: err });
          throw err;
        }
      }
      if ('refusal' in checked) {
        deps.log.warn(
          { operation: operationOf(ctx), refusal: checked.refusal.title },
          'nexus caller not authenticated',
        );
        throw unauthenticated(checked.refusal);
      }
      return checked.principal;
    },
    async brandOf(ctx, principal) {
      const refuse = (p: Problem) =>
        new HandlerError(p.status === 403 ? 'UNAUTHORIZED' : 'BAD_REQUEST', p.detail ?? p.title, {
          cause: causeOf(p),
          retryableOverride: false,
        });
      const resolved = actingBrand(principal.brand, headerOf(ctx.headers, PIXFLOW_BRAND_HEADER));
      if ('refusal' in resolved) throw refuse(resolved.refusal);
      if ('brand' in resolved) return resolved.brand;
      let exists: boolean;
      try {
        exists = await deps.directory.brandExists(resolved.lookUp);
      } catch (err) {
        throw new HandlerError('UNAVAILABLE', 'the brands cannot be read now', { cause: err as Error });
      }
      if (!exists) throw refuse(unknownBrand(resolved.lookUp));
      return resolved.lookUp;
    },
    requireScopes(ctx, principal, scopes) {
      const missing = scopes.filter((s) => !grants(principal.scopes, s));
      if (missing.length === 0) return;
      const operation = operationOf(ctx);
      deps.log.warn({ operation, keyId: principal.id, missing }, 'nexus caller lacks scopes');
      const p = new Problem(
        403,
        'insufficient-scope',
        'Insufficient scope',
        `this API key lacks ${missing.join(', ')}, which ${operation} needs`,
        { required_scopes: scopes, missing_scopes: missing },
      );
      throw new HandlerError('UNAUTHORIZED', `${p.title}: ${p.detail}`, {
        cause: causeOf(p),
        retryableOverride: false,
      });
    },
  };
}
