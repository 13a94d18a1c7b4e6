import { Router } from 'express';
import { brandOf } from '../api-keys/authenticate';
import { maskBankAccount, maskCpf, maskPixKey } from '../common/mask';
import { accountKeyHash, cpfHash } from '../common/pii';
import { payeeOf, pixKeyKey } from '../contracts/customer';
import type { CustomerAccountInput } from '../contracts/customer-input';
import { depositFinalStatuses } from '../contracts/deposit';
import { onboardingFinalStatuses } from '../contracts/onboarding';
import { parseCompositeAccountKey } from '../contracts/pix-key';
import { withdrawalFinalStatuses } from '../contracts/withdrawal';
import { changeDepositLimits, depositLimitsView } from '../customers/deposit-limits';
import { payoutsTodayView } from '../customers/payouts-today';
import { knowsCustomer } from '../db/customer-brands';
import {
  type AccountRow,
  addAccount,
  getCustomer,
  listAccounts,
  type NewAccount,
  openFlows,
  removeAccount,
} from '../db/customers';
import { type EligibilityRecord, eligibilityOfHash } from '../db/eligibility';
import { type Operation, route } from '../http/operation';
import { Problem } from '../http/problem';
import { parse } from '../http/request-input';
import {
  accountParamsSchema,
  type CustomerView,
  customerAccountBodySchema,
  customerAccountListSchema,
  customerAccountSchema,
  customerSchema,
  type DepositLimitsView,
  depositLimitsBodySchema,
  depositLimitsSchema,
} from './customers-schemas';
import type { ApiDeps } from './deps';
import { cpfParamsSchema } from './schema-parts';

const unknownCustomer = () =>
  new Problem(404, 'customer-not-found', 'Customer not found', 'pixflow has never seen this CPF');

const accountView = (a: AccountRow) => ({ ...a, id: String(a.id) });

/** A CPF in a key that is not the person's: registering it would make somebody else's account theirs. */
const notOwner = () =>
  new Problem(
    422,
    'payee-not-owner',
    "Not the person's own account",
    "body.pixKey: a CPF key must be the person's own CPF",
    { invalid_params: [{ name: 'body.pixKey', reason: "a CPF key must be the person's own CPF" }] },
  );

/** The row to register for a checked key, or a refusal when the key names another CPF. */
function accountToRegister(
  cpf: string,
  { pixKey, pixType }: CustomerAccountInput,
  hashAccount: (k: string) => string,
): Omit<NewAccount, 'cpfHash' | 'cpfMasked' | 'source'> {
  const payee = payeeOf(cpf, pixKey, pixType, parseCompositeAccountKey);
  switch (payee.kind) {
    case 'other_cpf':
      throw notOwner();
    case 'own_cpf':
    case 'pix_key':
      return {
        kind: 'pix_key',
        pixType,
        keyHash: hashAccount(pixKeyKey(pixKey, pixType)),
        masked: maskPixKey(pixKey, pixType),
      };
    case 'bank_account':
      return {
        kind: 'bank_account',
        pixType: null,
        keyHash: hashAccount(payee.key),
        masked: maskBankAccount(payee.account.ispb, payee.account.branch, payee.account.account),
      };
    default:
      // The schema checked the form already.
      throw new Problem(400, 'validation-error', 'Request validation failed');
  }
}

/** The customer routes, as /openapi.json describes them and in its order. */
export const customerOperations = {
  get: {
    operationId: 'getCustomer',
    method: 'get',
    path: '/customers/:cpf',
    tag: 'Customers',
    summary: 'The person: verification, KYC facts, accounts, payouts today, open flows',
    description:
      "Read from Postgres, kept by the flows' activities. 404 for a CPF pixflow has never seen, and for a person the acting brand has not met (by starting their onboarding). A `suspended` verification (the provider contradicted a closed onboarding) counts as not verified. `eligibility` is the registry of impeded people's word on the person: while `impeded` (with `impeded` saying why and since when, and `closedAt` once an operator closed the account) no deposit is taken, and withdrawals to the person's own account go on.",
    params: cpfParamsSchema,
    ok: [{ status: 200, description: 'The customer', schema: customerSchema }],
    scopes: ['customers:read'],
  },
  accounts: {
    operationId: 'listCustomerAccounts',
    method: 'get',
    path: '/customers/:cpf/accounts',
    tag: 'Customers',
    summary: "The person's registered accounts, masked",
    params: cpfParamsSchema,
    ok: [{ status: 200, description: 'Active accounts, oldest first', schema: customerAccountListSchema }],
    scopes: ['customers:read'],
  },
  addAccount: {
    operationId: 'createCustomerAccount',
    method: 'post',
    path: '/customers/:cpf/accounts',
    tag: 'Customers',
    summary: "Register an account as the person's own (idempotent per key)",
    description:
      "A Pix key with its type, or the composite account form (pixType ACCOUNT). A CPF key, or a composite whose key part is a CPF, must be the person's own CPF (else 422 naming body.pixKey). 201 when registered, 200 for one already registered.",
    params: cpfParamsSchema,
    body: customerAccountBodySchema,
    ok: [
      { status: 201, description: 'Registered', schema: customerAccountSchema },
      { status: 200, description: 'Already registered', schema: customerAccountSchema },
    ],
    errors: [422],
    scopes: ['customers:write'],
  },
  removeAccount: {
    operationId: 'deleteCustomerAccount',
    method: 'delete',
    path: '/customers/:cpf/accounts/:id',
    tag: 'Customers',
    summary: 'Remove a registered account',
    params: accountParamsSchema,
    ok: [{ status: 204, description: 'Removed' }],
    scopes: ['customers:write'],
  },
  depositLimits: {
    operationId: 'getCustomerDepositLimits',
    method: 'get',
    path: '/customers/:cpf/deposit-limits',
    tag: 'Customers',
    summary: "The person's own deposit limits, what each period counted and has left",
    description:
      'Per America/Sao_Paulo day, ISO week (Monday to Sunday) and calendar month: the limit in force, a raised or removed one waiting for the cooling-off (`pending`, with `appliesAt`), and the deposits counted (completed, held, or waiting for payment). 404 for a CPF pixflow has never seen, and for a person the acting brand has not met.',
    params: cpfParamsSchema,
    ok: [{ status: 200, description: 'The limits', schema: depositLimitsSchema }],
    scopes: ['customers:read'],
  },
  setDepositLimits: {
    operationId: 'setCustomerDepositLimits',
    method: 'put',
    path: '/customers/:cpf/deposit-limits',
    tag: 'Customers',
    summary: 'Set the limits the person puts on their own deposits (responsible gaming)',
    description:
      "Integer centavos per period, null to remove one; a period left out stays as it is. A lower limit (or a first one) applies at once; a higher one, or removing one, waits for the cooling-off (the rules policy's deposits.limitCoolingOffMs, docs/policy.md) and is answered as `pending` with `appliesAt`. A new deposit that would pass a limit is refused (409 `deposit-limit-exceeded`, reason `deposit_limit_exceeded`).",
    params: cpfParamsSchema,
    body: depositLimitsBodySchema,
    ok: [{ status: 200, description: 'The limits now', schema: depositLimitsSchema }],
    scopes: ['customers:write'],
  },
} satisfies Record<string, Operation>;

/** The limits a person sets on their own deposits (customers/deposit-limits.ts). */
function depositLimitRoutes(
  r: Router,
  { pool, policy }: Pick<ApiDeps, 'pool' | 'policy'>,
  hashOf: (cpf: string) => string,
  requireKnown: (hash: string, brand: string) => Promise<void>,
) {
  route(r, customerOperations.depositLimits, async (req, res) => {
    const { cpf } = parse(cpfParamsSchema, 'path', req.params);
    const hash = hashOf(cpf);
    await requireKnown(hash, brandOf(res));
    const view: DepositLimitsView = await depositLimitsView(pool, hash, new Date());
    res.json(view);
  });

  route(r, customerOperations.setDepositLimits, async (req, res) => {
    const { cpf } = parse(cpfParamsSchema, 'path', req.params);
    const change = parse(depositLimitsBodySchema, 'body', req.body);
    const hash = hashOf(cpf);
    await requireKnown(hash, brandOf(res));
    const { deposits } = (await policy.current()).policy;
    const view: DepositLimitsView = await changeDepositLimits(
      pool,
      { cpfHash: hash, cpfMasked: maskCpf(cpf) },
      change,
      new Date(),
      deposits.limitCoolingOffMs,
    );
    res.json(view);
  });
}

/** What the registry of impeded people says of the person, as the customer view shows it. */
const eligibilityView = (
  e: EligibilityRecord | undefined,
): Pick<CustomerView, 'eligibility' | 'impeded' | 'closedAt'> => ({
  eligibility: e?.status ?? 'unknown',
  impeded: e?.impeded
    ? {
        ...e.impeded,
        reason: e.impeded.reason as NonNullable<CustomerView['impeded']>['reason'],
        registryAnswer: e.registryAnswer,
      }
    : null,
  closedAt: e?.closed?.at ?? null,
});

/** The person's open flows: onboardings every brand's (shared), deposits and withdrawals the brand's. */
const openFlowsOf = (pool: ApiDeps['pool'], hash: string, brand: string) =>
  openFlows(
    pool,
    hash,
    {
      onboarding: onboardingFinalStatuses,
      deposit: depositFinalStatuses,
      withdrawal: withdrawalFinalStatuses,
    },
    undefined,
    brand,
  );

export function customerRoutes({ config, pool, policy }: ApiDeps) {
  const r = Router();
  const hashOf = (cpf: string) => cpfHash(cpf, config.PII_HASH_KEY);
  const hashAccount = (k: string) => accountKeyHash(k, config.PII_HASH_KEY);
  // A person the acting brand has not met (docs/brands.md, "People a brand knows") is answered
  // as a CPF pixflow never saw: whether another brand knows them is never told.
  const requireKnown = async (hash: string, brand: string) => {
    if (!(await knowsCustomer(pool, hash, brand))) throw unknownCustomer();
  };

  route(r, customerOperations.get, async (req, res) => {
    const { cpf } = parse(cpfParamsSchema, 'path', req.params);
    const hash = hashOf(cpf);
    const now = new Date();
    await requireKnown(hash, brandOf(res));
    const customer = await getCustomer(pool, hash);
    const { withdrawals } = (await policy.current()).policy;
    const [accounts, payouts, open, eligibility] = await Promise.all([
      listAccounts(pool, hash),
      payoutsTodayView(pool, withdrawals.dailyLimitCentavos, hash, now),
      openFlowsOf(pool, hash, brandOf(res)),
      eligibilityOfHash(pool, hash),
    ]);
    const kycReadAt = customer?.kyc.readAt;
    const view: CustomerView = {
      cpfMasked: maskCpf(cpf),
      cpfHash: hash,
      verification: {
        status: (customer?.verification ?? 'none') as CustomerView['verification']['status'],
        at: customer?.verificationAt ?? null,
        by: customer?.verificationBy ?? null,
        flow: customer?.verificationFlow ?? null,
        suspension: customer?.suspension ?? null,
      },
      kyc:
        customer && kycReadAt
          ? {
              ...customer.kyc,
              readAt: kycReadAt,
              ageSeconds: Math.max(0, Math.floor((now.getTime() - Date.parse(kycReadAt)) / 1000)),
            }
          : null,
      accounts: accounts.map(accountView),
      payoutsToday: payouts,
      lastBiometric: customer?.lastBiometric ?? null,
      ...eligibilityView(eligibility),
      openFlows: open.map((f) => ({ ...f, type: f.type as CustomerView['openFlows'][number]['type'] })),
    };
    res.json(view);
  });

  route(r, customerOperations.accounts, async (req, res) => {
    const { cpf } = parse(cpfParamsSchema, 'path', req.params);
    const hash = hashOf(cpf);
    await requireKnown(hash, brandOf(res));
    res.json({ items: (await listAccounts(pool, hash)).map(accountView) });
  });

  route(r, customerOperations.addAccount, async (req, res) => {
    const { cpf } = parse(cpfParamsSchema, 'path', req.params);
    const body = parse(customerAccountBodySchema, 'body', req.body);
    const hash = hashOf(cpf);
    await requireKnown(hash, brandOf(res));
    const { account, created } = await addAccount(pool, {
      ...accountToRegister(cpf, body, hashAccount),
      cpfHash: hash,
      cpfMasked: maskCpf(cpf),
      source: 'api',
    });
    res
      .status(created ? 201 : 200)
      .location(`/v1/customers/${cpf}/accounts/${account.id}`)
      .json(accountView(account));
  });

  route(r, customerOperations.removeAccount, async (req, res) => {
    const { cpf, id } = parse(accountParamsSchema, 'path', req.params);
    const hash = hashOf(cpf);
    // Another brand's person: as for a CPF with no such account.
    const known = await knowsCustomer(pool, hash, brandOf(res));
    if (!known || !(await removeAccount(pool, hash, Number(id)))) {
      throw new Problem(404, 'account-not-found', 'Account not found', 'no active account with this id');
    }
    res.status(204).end();
  });

  depositLimitRoutes(r, { pool, policy }, hashOf, requireKnown);

  return r;
}
