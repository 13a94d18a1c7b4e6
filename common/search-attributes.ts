import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// Custom search attributes, so operators can filter in the Temporal UI, e.g.
// `PixflowType = "withdrawal" AND PixflowStatus = "awaiting_approval" AND PixflowMerchant = "m1"`.
// PixflowStatus: every status of an onboarding, a held deposit or an identification; of a deposit
// or a withdrawal only those an operator filters for (docs/flows.md says which).
export const FlowTypeKey = defineSearchAttributeKey('PixflowType', SearchAttributeType.KEYWORD);
export const FlowStatusKey = defineSearchAttributeKey('PixflowStatus', SearchAttributeType.KEYWORD);
/** Keyed hash of the CPF: lets an operator find a person's flows without the CPF in plain text. */
export const CpfHashKey = defineSearchAttributeKey('PixflowCpfHash', SearchAttributeType.KEYWORD);
export const CpfMaskedKey = defineSearchAttributeKey('PixflowCpfMasked', SearchAttributeType.KEYWORD);
export const AmountKey = defineSearchAttributeKey('PixflowAmountCentavos', SearchAttributeType.INT);
export const MerchantKey = defineSearchAttributeKey('PixflowMerchant', SearchAttributeType.KEYWORD);
/** The brand a deposit or a withdrawal belongs to (docs/brands.md), set when the flow starts. */
export const BrandKey = defineSearchAttributeKey('PixflowBrand', SearchAttributeType.KEYWORD);

export const searchAttributeKeys = [
  FlowTypeKey,
  FlowStatusKey,
  CpfHashKey,
  CpfMaskedKey,
  AmountKey,
  MerchantKey,
  BrandKey,
];

/** `temporal server start-dev --search-attribute Name=Type` arguments for the same keys. */
export function searchAttributeCliArgs(): string[] {
  const cliType: Record<string, string> = { KEYWORD: 'Keyword', INT: 'Int' };
  return searchAttributeKeys.flatMap((k) => ['--search-attribute', `${k.name}=${cliType[k.type] ?? k.type}`]);
}

/**
 * A flow's search attributes at start. The API sets them (only it knows the CPF-hash key). A
 * flow that shows every status in PixflowStatus starts with its first; a deposit or a
 * withdrawal shows only the statuses an operator filters for (workflows/flow-lifecycle.ts), so
 * it starts without one.
 */
export function startSearchAttributes(f: {
  type: 'onboarding' | 'deposit' | 'withdrawal' | 'biometrics';
  status?: string;
  cpfHash: string;
  cpfMasked: string;
  amountCentavos?: number;
  merchant?: string;
  brand?: string;
}) {
  return [
    { key: FlowTypeKey, value: f.type },
    ...(f.status === undefined ? [] : [{ key: FlowStatusKey, value: f.status }]),
    { key: CpfHashKey, value: f.cpfHash },
    { key: CpfMaskedKey, value: f.cpfMasked },
    ...(f.amountCentavos === undefined ? [] : [{ key: AmountKey, value: f.amountCentavos }]),
    ...(f.merchant === undefined ? [] : [{ key: MerchantKey, value: f.merchant }]),
    ...(f.brand === undefined ? [] : [{ key: BrandKey, value: f.brand }]),
  ];
}
